"""Test oracles and fixtures that share no code with softrod (pure numpy + scipy).

cosserat_reference: Rucker & Webster 2011 static shooting solver (the oracle).
robots: small inline robot descriptions used across the core tests.
"""

from .cosserat_reference import RefSolution, solve_reference

__all__ = ["RefSolution", "solve_reference"]
