"""The brand team's workspace (`visibility serve`): a web app over the warehouse, read-only."""
