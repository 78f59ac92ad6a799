"""The options (declared once), the run's typed frozen config, and parsed options → config."""
