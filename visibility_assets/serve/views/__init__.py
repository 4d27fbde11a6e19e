"""One module per view of the workspace: its SQL (bound parameters only) and the function that
turns the filters into the view's data: a dict that is the view's JSON under /api/, whose
`tables` are what the page shows and what its CSV export holds."""
