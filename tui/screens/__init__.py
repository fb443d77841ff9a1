"""convtui.tui.screens: the full screens of the TUI."""
