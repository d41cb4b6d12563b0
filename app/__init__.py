"""pdestudio's desktop application and command line. Qt is imported lazily (only by the window)."""
