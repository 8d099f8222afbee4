"""The simulator: the scheduler, pool trees and fair-share engine run in virtual time.

``load_scenario`` validates a scenario document; ``simulate`` runs it against the real
:class:`~ytsched.scheduling.Scheduler` with simulated nodes and returns what happened.
``docs/simulator.md`` describes the scenario format and the outputs.
"""

from ytsched.simulator.engine import Simulation, simulate
from ytsched.simulator.results import ListRecorder, NullRecorder, Recorder, SimulationResult
from ytsched.simulator.scenario import Scenario, ScenarioError, load_scenario

__all__ = [
    "ListRecorder",
    "NullRecorder",
    "Recorder",
    "Scenario",
    "ScenarioError",
    "Simulation",
    "SimulationResult",
    "load_scenario",
    "simulate",
]
