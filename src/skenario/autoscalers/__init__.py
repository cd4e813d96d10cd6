"""Autoscalers: pure calculators mirroring upstream algorithms, and the controllers that drive them."""
