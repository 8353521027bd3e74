"""Parameters of Generalized Biped Walking Control (seed 000, Ch. 5): style data and control constants."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from strider.control.falls import FallCriteria
from strider.control.ipm import IPMParams
from strider.control.step_fsm import StrikeParams
from strider.control.step_timing import StepTimingParams
from strider.control.trajectory import CatmullRom
from strider.control.velocity_tuning import VelocityTuningParams
from strider.datafile import Fields, load_yaml, resolve_data_file, shipped_names
from strider.errors import ConfigError

STYLE_DIR = Path(__file__).parent / "data" / "styles"
MAX_STEP_WIDTH = 0.5   # m between the feet's centre lines, commanded or in a style (decision: a wide straddle)


@dataclass(frozen=True)
class Style:
    """How the gait looks: the "zero gait" of Sec. 5.3.1 plus its style parameters (Sec. 5.5.2)."""

    name: str = "default"
    # Ankle lift over phase, m; ends just below the ground so the foot comes down firmly.
    swing_height: CatmullRom = field(default_factory=lambda: CatmullRom((0.0, 0.5, 1.0), (0.0, 0.1, -0.01)))
    stance_knee: float = 0.1            # rad, parent-relative
    body_bend: float = 0.0              # rad forward; lower back, upper back, head get 1/3, 2/3, 1 of it
    arm_down: float = 1.35              # rad from the T-pose to hanging arms
    arm_swing: float = 0.3              # rad amplitude, in antiphase with the legs
    elbow_bend: float = 0.3             # rad
    swing_plane_twist: float = 0.0      # rad about the hip-ankle line (Sec. 5.3.2)
    toe_out: float = 0.0                # rad of foot yaw away from the midline
    step_width: float | None = None     # m; None keeps the command's


@dataclass(frozen=True)
class GBWCParams:
    style: Style = field(default_factory=Style)
    ipm: IPMParams = field(default_factory=IPMParams)
    velocity_tuning: VelocityTuningParams = field(default_factory=VelocityTuningParams)
    strike: StrikeParams = field(default_factory=StrikeParams)
    step_timing: StepTimingParams = field(default_factory=StepTimingParams)
    falls: FallCriteria = field(default_factory=FallCriteria)
    placement_speed_gain: float = 0.15     # s: foothold shift per m/s of speed error (beyond the source)
    placement_speed_integral: float = 0.2  # 1/s... m per (m/s * s) of accumulated speed error (beyond the source)
    speed_integral_limit: float = 1.0      # m: anti-windup bound on the accumulated speed error
    # s: foothold shift back per m/s of desired speed, on top of the IPM's alpha (beyond the source; tuned here).
    # Walking steadily, the speed integral settled near 0.9 s * Vd at every speed (0.25 at 0.3 m/s, 0.55 at
    # 0.6): a model error proportional to the command, which the bounded integral could not carry past
    # about 1 m/s. Fed forward, it leaves the integral only the residual.
    placement_speed_lead: float = 0.18
    # Bound on that shift, as a fraction of leg length (tuned here on the 0.86 m leg of the default humanoid).
    # Past about 1.5 m/s the gait turns into short quick steps that lose lateral balance: with 0.12 m the
    # 1.7 m/s command falls, with 0.08 m it walks at 1.46 m/s; 0.08 m of leg (0.093) fells the 0.75x humanoid at 1 m/s.
    placement_lead_limit: float = 0.07
    # Phase at which the swing ankle's path reaches the foothold (tuned here). The ankle lags its path by
    # 10-20 cm early in a fast swing (the lifting foot still drags with the ground) and then races after it;
    # a path that parked on the foothold at phase 0.7 let it overshoot by 6-8 cm and strike ahead of the
    # foothold, braking every step: 1.4 m/s walked at 1.27 and 1.7 at 1.42. Ending at the strike, 1.40 and 1.57.
    swing_reach_phase: float = 1.0
    # The same for the steps of a commanded stop, tuned here: those steps are cut short by the capture-point
    # timing, and a foot that only reaches its foothold at the strike lands short. (Recovery steps from standing
    # used it too until recovery_swing_reach_phase: at 1.0 a 250 N side push then toppled the `stand` skill over
    # the stepping foot, at 0.7, the value before the fast-walking change, it caught itself with one step.)
    stopping_swing_reach_phase: float = 0.7
    # The same for recovery steps (a push from standing, GBWC's own or the `stand` skill's hand-over), tuned here.
    # Since the hovering stance foot shares the root control (recovery_stance_load), a path that reaches the
    # foothold only at the strike no longer topples the 250 N side push, and it lands more of them: P1 at
    # 200/225/250/275/300 N over 0-180 deg passed 16/25 against 12/25 at 0.7, with no falls against 2 (250 N
    # over all 8 directions: 6/8 against 4/8). 0.93 passed fewer (2/5 at 250 N).
    recovery_swing_reach_phase: float = 1.0
    # Body-weight fraction at which a recovery step's stance foot takes the full root control (tuned here; see
    # GBWC._root_control). A 250 N push from the side lifts the foot that becomes the stance foot; driving the
    # pelvis through that hovering leg swung it out and it landed sliding (0.127 m, of which 0.083 m in the
    # step). At 0.3 the 250 N push from behind and from 45 deg left-behind pass (0.08, 0.06 m of slide), 0.2
    # and 0.4 leave one of those directions, or the sides, over 0.1 m.
    recovery_stance_load: float = 0.3
    # Crossover recovery steps (beyond the source, tuned here). When a sideways push has lifted the foot GBWC
    # would stand on (its load is under this body-weight fraction as the step begins), the step is taken with
    # that lifted foot instead, crossing in front of or behind the loaded one to the foothold on the far side.
    # None keeps GBWC's own choice.
    recovery_crossover_load: float | None = 0.1
    # ...and only when the body moves sideways at least this many times faster than forwards or backwards (tuned
    # here): after a diagonal push the crossed feet lie one behind the other and the next step drags the first.
    recovery_crossover_ratio: float = 2.0
    # The crossover step's own swing reach phase (see swing_reach_phase; tuned here). The crossing foot reaches
    # for a foothold that soon lies past its reach as the body rolls over the stance foot; reaching it earlier
    # catches more of the side pushes: 90 deg pushes at 175-300 N (13 forces) all pass at 0.75 and 0.8, at 1.0
    # 210/225/240 N fail, at 0.7 and 0.85 one force fails.
    recovery_crossover_reach_phase: float = 0.8
    # Stance hip gains and feed-forward in a recovery from a backward, non-crossing push that lifted the stance foot
    # (beyond the source, tuned here; see GBWC._root_control). Pushed back and sideways (135/225 deg), the foot on
    # the far side lands as the body falls away from it, bearing 0.2-0.7 body weights; the root PD, righting the
    # pelvis through the full hip gains, pushed it outwards and forwards past friction and it slid 5-9 cm in that
    # step (P1 failed at 234, 260, 275 and 300 N). At 0.3 of them 135 deg passes from 200 to 290 N in 5-10 N steps
    # (slides 0.04-0.07 m up to 270 N), 0.2 and 0.4 fail from 280 N, and the P1 grid 50-375 N passes 89/112 cells
    # with no falls (87 with 2 at 1.0), none lost. Forward diagonal pushes lost 275-300 N with it, and taking every
    # backward recovery (feet down too) lost 45/315 deg at 275 N while 180 deg gained 275-325 N. 1.0 turns it off.
    recovery_backward_hip_scale: float = 0.3
    # Weight of the ground's rise in a recovery step's inverted-pendulum foothold when the body moves uphill
    # (beyond the source, tuned here; see GBWC._slope_offsets); 0 keeps the flat-ground IPM. The energy balance
    # alone (1.0) leaves the stand skill's 250 N push from behind on a 15 deg slope (facing uphill) taking a step
    # too long to climb over, and it falls back downhill: at 2.0 it stands, and pushes of 200-250 N on 15 deg and
    # 250 N on 5-18 deg pass without a fall (7/9 against 3/9 at 0; 3.0 also 7/9 but slides more). Moving downhill
    # it is left at the flat IPM: weighting the fall the same way (0.25-1.0) lengthened the steps and slid and fell more.
    recovery_slope_uphill: float = 2.0
    # Extra stance-knee bend, rad per m/m of the ground's fall along the sagittal motion under the stance foot,
    # while walking or stepping to a stop (beyond the source, tuned here; see GBWC._downhill_knee). Down a slope
    # the straight stance leg left the hip 0.83 m over the lower foothold, the whole swing-leg extension, and the
    # foothold was cut back under the hip: -10/-15 deg at 0.6 m/s ran away to 1.2-2 m/s and fell. At 2.0 both
    # walk at 0.58 m/s, and the stand skill's 250 N recovery steps down 10-15 deg slopes (pushed from behind facing
    # down, from the front facing up) stop without a fall. 1.5 and 2.5 also walk them, but at 1.5 the +10 deg push
    # from the front still fell, and at 3.0 the +15 deg one. -20 deg falls at every value tried (1.5: at 11.5 s,
    # 2.0-2.5: at 2.6-2.8 s, 4.0: at once). Moving a walking foothold ahead by h * fall (0.5-1.5 of it) did not help.
    downhill_knee: float = 2.0
    # m/m: the steepest fall that bend follows (tan 20 deg, the terrain bench's steepest slope), so the edge of a
    # step down ahead of the stance foot (0.15 m over the 0.1 m probe) does not fold the knee.
    downhill_max_fall: float = 0.364
    max_leg_extension: float = 0.97        # of full leg length the swing IK may ask for
    # When the foothold lies past that reach, the speed-tracking shifts above (gain, integral, lead) yield
    # before the inverted-pendulum foothold does (beyond the source; see GBWC._tracking_share).
    placement_balance_first: bool = True
    velocity_tuning_knee: bool = True      # include the stance knee in J_V^T F (Sec. 5.3.3 includes the whole leg)
    control_period: float = 0.01       # s; PD servos run every physics step inside MuJoCo
    # rad/s. The source's omega_max is 2 rad/s (seed 000, Sec. 5.5.1); with the softer root tilt gains
    # below, 90 and 180 degree heading jumps at 2 rad/s fall and at 1.5 rad/s do not (measured).
    max_turn_rate: float = 1.5
    speed_range: tuple[float, float] = (-0.6, 1.7)   # m/s commanded (seed 000, Sec. 5.5.1)
    period_range: tuple[float, float] = (0.2, 1.0)   # s per step commanded (seed 000, Sec. 5.5.1)
    # m/s either way: the source gives no sideways range; a decision here, at about half the backwards speed.
    lateral_speed_limit: float = 0.3
    max_acceleration: float = 0.8       # m/s^2 ramp of the desired speed, so starts are gentle
    start_shift: float = 0.4           # fraction of the way to the stance foot before the first lift (Sec. 5.5.1)
    start_unload: float = 0.25          # ...and the swing foot carries less than this fraction of body weight
    stop_speed: float = 0.1             # epsilon, m/s: stand once slower than this at foot strike (coros-walking.md, Sec. 4)
    stand_support_margin: float = 0.02  # m; step when the capture point comes this close to the support edge
    sole_margin: float = 0.7            # fraction of the sole the centre of pressure may use
    min_lateral_clearance: float = 0.08 # m the swing ankle keeps beside the stance ankle
    # Fraction of the root gains (Eq. 2.3) used about the pelvis' tilt axes; yaw keeps the full gains.
    # Beyond the source: through a 200 N m hip, the full tilt stiffness tips the stance foot after hard
    # pushes (600 N push grid 9/32 at 1.0, 15/32 at 0.3), while turning needs the full yaw stiffness.
    root_tilt_scale: float = 0.3


def available_styles() -> list[str]:
    return shipped_names(STYLE_DIR)


def load_style(name_or_path: str) -> Style:
    path = resolve_data_file(name_or_path, STYLE_DIR, "style")
    f = Fields(load_yaml(path), str(path))
    f.reject_unknown({"name", "description", "swing_height", "stance_knee", "body_bend", "arm_down", "arm_swing",
                      "elbow_bend", "swing_plane_twist", "toe_out", "step_width"})
    base = Style()
    swing = base.swing_height
    if f.has("swing_height"):
        sh = f.mapping("swing_height")
        phases, heights = sh.raw("phases"), sh.raw("heights")
        try:
            swing = CatmullRom(tuple(float(p) for p in phases), tuple(float(h) for h in heights))
        except (TypeError, ValueError) as exc:
            raise ConfigError(str(path), "swing_height", f"expected phases and heights lists ({exc})") from None
    return Style(
        name=f.string("name", path.stem),
        swing_height=swing,
        stance_knee=f.number("stance_knee", base.stance_knee, min=0.0, max=2.0),
        body_bend=f.number("body_bend", base.body_bend, min=-0.6, max=1.2),
        arm_down=f.number("arm_down", base.arm_down, min=0.0, max=1.5),
        arm_swing=f.number("arm_swing", base.arm_swing, min=0.0, max=1.2),
        elbow_bend=f.number("elbow_bend", base.elbow_bend, min=0.0, max=2.5),
        swing_plane_twist=f.number("swing_plane_twist", base.swing_plane_twist, min=-1.0, max=1.0),
        toe_out=f.number("toe_out", base.toe_out, min=-0.5, max=0.5),
        step_width=f.number("step_width", None, min=0.0, max=MAX_STEP_WIDTH),
    )
