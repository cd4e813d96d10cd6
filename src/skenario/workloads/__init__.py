"""Traffic: arrival patterns (and, from issue #3, trace readers)."""
