"""End-to-end tests: the real dev instance driven through the real UI in Chromium."""
