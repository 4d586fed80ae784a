"""The vehicle kinds: one folder each (kinds/<name>/), and this registry: one line each.

A kind's folder holds its facts (kind.yaml, read by sim_core.kinds), its parameter files
(params/), its example scenarios (scenarios/) and its code: ``__init__.py`` (its KindEntry,
ENTRY), model.py, judge.py, view.py, controllers.py (in-process controllers, if any) and
ros.py (its MemberIo in the world's process, if it has interfaces of its own). What each part
is and what ``kinds.entry.missing`` checks: kinds.entry, docs/extending.md section 1. The
template kind to copy is ``rover``.

REGISTERED names the kinds whose code the world loads (kinds.entry.entry imports a kind's
folder when first asked). test_kinds fails for a folder without its line here, or a line
without its folder.
"""

REGISTERED = (
    'multirotor',
    'plane',
    'boat',
    'auv',
    'rover',
)
