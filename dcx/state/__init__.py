"""The workspace's state: profile and registry, key and refs, cursors, the packet store and decision index (docs/architecture.md)."""
