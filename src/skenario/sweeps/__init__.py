"""Many runs of one scenario: sweeps over settings and seeds, and searches for the best setting (issue #20)."""
