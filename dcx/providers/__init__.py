"""Advisory recall: the ContextProvider port, receipts, bm25, OpenViking, extensions."""
