"""Where a lockstep step's wall time goes: ours, the send, the FC's side, the answer's wait.

No rclpy. One clock for all (time.time(): the kernel's SO_TIMESTAMPNS arrival stamps are on
it). A step runs from one FC answer returned by recv() to the next:

    answer in --ours--> sensors to send() --send--> returned --FC's side--> the next answer
    in our socket (kernel stamp) --waited--> recv() returns it

- ours: decode the answer, mix, integrate, sample the sensors, encode (the critical path);
- send: the HIL_SENSOR syscall (over loopback it carries the bytes to the FC's socket and
  wakes the FC's thread);
- the FC's side: from our send to its answer's arrival: its whole work and the way back. It
  does not depend on what we do meanwhile (it is stamped by the kernel);
- waited: the answer in our socket until we read it: the topics we publish after the send
  (``after``, while the FC works), then the loop's way back to the socket.

Without kernel stamps (a platform without SO_TIMESTAMPNS) the FC's side and the wait are
one figure (``side``: our send to our recv).
"""

from dataclasses import dataclass


@dataclass
class StepSplit:
    """Sums over the steps [s]; mean() per step."""

    n: int = 0               # steps measured (an answer after a sensor send)
    ours: float = 0.0
    send: float = 0.0
    after: float = 0.0
    fc: float = 0.0          # the FC's side (stamped steps only)
    waited: float = 0.0      # (stamped steps only)
    stamped: int = 0
    side: float = 0.0        # our send returned -> our recv returned
    paired: int = 0          # answers that followed a send of ours

    def __post_init__(self):
        """Nothing sent yet."""
        self._sent = None            # (send start, send end) of the last HIL_SENSOR
        self._last = None            # the send the last answer followed

    def sent(self, t0: float, t1: float) -> None:
        """The step's HIL_SENSOR went to the kernel at t0; send() returned at t1."""
        self._sent = (t0, t1)

    def answered(self, t_in: float, stamp: float, t_done: float) -> None:
        """An FC answer, returned by recv() at t_in, handled at t_done.

        stamp: its kernel arrival (0 = none). Handled: the next sensors sent, topics published.
        """
        prev = self._last
        if prev is not None:
            self.paired += 1
            self.side += t_in - prev[1]
            if stamp > 0.0:
                self.fc += stamp - prev[1]
                self.waited += t_in - stamp
                self.stamped += 1
        cur = self._sent
        if cur is not None and cur is not prev and cur[0] >= t_in:
            # this answer's handling sent the next sensors: a whole step. In a fleet the
            # sensors go out when the last vehicle's answer came: another bridge's thread
            # sent ours before this answer arrived (it only pairs with the FC's side below)
            self.n += 1
            self.ours += cur[0] - t_in
            self.send += cur[1] - cur[0]
            self.after += t_done - cur[1]
        self._last = cur

    def summary(self) -> str:
        """The log line's figures, µs per step."""
        if not self.n:
            return 'no lockstep step measured'
        k = self.n

        def us(x, n=k):
            return f'{1e6 * x / max(n, 1):.0f} µs'
        text = (f'per step: ours {us(self.ours)} (answer in -> sensors to send), send '
                f'{us(self.send)}, ')
        if self.stamped:
            s = self.stamped
            return text + (f"the FC's side {us(self.fc, s)} (sensors sent -> its answer in our "
                           f'socket), the answer waited {us(self.waited, s)} (topics after '
                           f'the send {us(self.after)}, then back to the socket)')
        return text + (f"the FC's side and our wait {us(self.side, self.paired)} (topics "
                       f'after the send {us(self.after)})')

    def cost(self, answers: int, work_s: float) -> str:
        """The closing line: work per FC answer (answers > 0, work_s [s] in all), the split."""
        return (f'{answers} FC answers taken: {1e6 * work_s / answers:.0f} µs of work per '
                'answer (decode, mix; composed: integrate, sensors, HIL_SENSOR out, topics); '
                + self.summary())
