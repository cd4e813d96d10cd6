"""Scenario files in, wired simulations out."""

from skenario.scenario.loader import load_scenario, parse_scenario
from skenario.scenario.schema import Scenario
from skenario.scenario.simulation import Simulation

__all__ = ["Scenario", "Simulation", "load_scenario", "parse_scenario"]
