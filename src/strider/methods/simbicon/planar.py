"""SIMBICON's targets on a planar walker (seed 000, Sec. 3.6): hinge hips, knees and ankles about y.

A hinge's positive turn about +y pitches the child's lower end backwards, so
a thigh swung forward by theta in the world sits at hip angle -theta minus
the torso's pitch, a bent knee is positive, and toes lift at negative ankle
angles. The torso is the root: the stance hip's servo holds its pitch (Eq. 2.3)
and a feed-forward cancels the swing hip's torque on it.
"""

from __future__ import annotations

from strider.control.frames import CharacterFrame
from strider.methods.simbicon.gait import Gait, GaitState
from strider.sim import Character


class PlanarBody:
    def __init__(self, character: Character, gait: Gait):
        self.character, self.gait = character, gait
        self.legs = character.spec.roles.legs

    def pose(self) -> None:
        """A planar walker has no arms to pose."""

    def write_targets(self, frame: CharacterFrame, st: GaitState, phase: float, sagittal: float, coronal: float,
                      stance_side: str, swing_side: str) -> None:
        ch = self.character
        ctrl, joints = ch.servo_targets, ch.joints
        swing, stance = self.legs[swing_side], self.legs[stance_side]
        ctrl[joints[swing.hip].servos[0]] = -sagittal - ch.root_pitch()[0]
        ctrl[joints[swing.knee].servos[0]] = st.swing_knee(phase)
        ctrl[joints[stance.knee].servos[0]] = st.stance_knee(phase)
        ctrl[joints[swing.ankle].servos[0]] = -st.swing_ankle(phase)
        ctrl[joints[stance.ankle].servos[0]] = -st.stance_ankle(phase)
        self._torso_target = st.torso(phase)

    def root_control(self, heading: float, kp: float, kd: float, stance_side: str, swing_side: str) -> None:
        """Eq. 2.3 in the plane: the stance hip's servo puts kp (lean - pitch) - kd pitch_rate on the torso.

        The torso is at its target when the hip is at thigh - lean, and asking for the thigh's own rate as the
        hip's turns the servo's damping into damping of the torso's rate (as ``stance_hip_servo_command``)."""
        ch = self.character
        stance, swing = self.legs[stance_side], self.legs[swing_side]
        joint = ch.joints[stance.hip]
        pitch, pitch_rate = ch.root_pitch()
        thigh = pitch + float(ch.data.qpos[joint.qpos[0]])
        thigh_rate = pitch_rate + float(ch.data.qvel[joint.dof[0]])
        ch.servo_targets[joint.servos[0]] = thigh - self._torso_target + kd / kp * thigh_rate
        ch.set_joint_feedforward(stance.hip, -float(ch.servo_forces[ch.joints[swing.hip].servos[0]]))
