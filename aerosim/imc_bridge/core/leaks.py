"""Simulated leaks per entity for IMC LeakSimulation (pure, no rclpy)."""

from typing import Dict, Sequence, Tuple

OFF, ON = 0, 1        # IMC LeakSimulation.OperationEnum values


class LeakState:
    """Leak flags of the configured leak entities (all dry at start)."""

    def __init__(self, entities: Sequence[str]):
        """entities: the leak entity labels (unique, non-empty, no commas)."""
        names = tuple(entities)
        for e in names:
            if not e or ',' in e or e != e.strip():
                raise ValueError(f'leak entity label {e!r}: non-empty, no commas, no '
                                 'surrounding spaces')
        if len(set(names)) != len(names):
            raise ValueError(f'leak entity labels must be unique: {list(names)}')
        self.entities = names
        self.leaking: Dict[str, bool] = dict.fromkeys(names, False)

    def apply(self, op: int, entities_csv: str) -> Tuple[str, ...]:
        """Apply a LeakSimulation: op OFF/ON for the listed entities (empty list = all).

        Returns the entities it names. Raises ValueError (and changes nothing) for an unknown
        op or entity label.
        """
        if op not in (OFF, ON):
            raise ValueError(f'op {op}: must be OFF (0) or ON (1)')
        listed = tuple(s.strip() for s in entities_csv.split(',')) if entities_csv.strip() \
            else self.entities
        unknown = [e for e in listed if e not in self.leaking]
        if unknown:
            raise ValueError(f'unknown leak entities {unknown}; configured: '
                             f'{list(self.entities)}')
        for e in listed:
            self.leaking[e] = op == ON
        return listed

    def active(self) -> Tuple[str, ...]:
        """The entities leaking now, in configuration order."""
        return tuple(e for e in self.entities if self.leaking[e])

    def reset(self) -> None:
        """All dry."""
        for e in self.entities:
            self.leaking[e] = False
