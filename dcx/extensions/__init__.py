"""Extensions: manifests, lifecycle state, doctor, and the one subprocess boundary."""
