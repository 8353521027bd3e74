"""The control vocabulary: small pieces every controller is built from.

Each module is one concept with its source equation cited: quaternion PD
(:mod:`pd`), phase trajectories (:mod:`trajectory`), the character frame
(:mod:`frames`), two-link IK (:mod:`ik`), inverted-pendulum foot placement
(:mod:`ipm`), Jacobian-transpose virtual forces (:mod:`virtual_force`),
gravity compensation (:mod:`gravity`), velocity tuning
(:mod:`velocity_tuning`), root control through the stance hip
(:mod:`stance_hip`), the step state machine (:mod:`step_fsm`) and fall
detection (:mod:`falls`).
"""
