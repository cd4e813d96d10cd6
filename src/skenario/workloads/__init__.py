"""Traffic: arrival patterns and trace replays, each a lazy iterator of absolute arrival times in ns."""
