"""Tests of the CPU disciplines in src/skenario/model/cpu/, one module per discipline."""
