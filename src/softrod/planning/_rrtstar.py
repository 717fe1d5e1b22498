"""RRT* in pressure space with history-carrying nodes (ALGORITHMS.md D.3, D.4).

Why not OMPL. OMPL 2.x (`pip install ompl`) ships `ompl.geometric.RRTstar`, and its
`setDelayCC(True)` even sorts neighbours by cost before collision checks. But a geometric
planner assumes that a state is a point of the state space, reached the same way from any
parent: it stores one state per motion and validates (s1, s2) pairs with a const
MotionValidator. Here a node's backbone B is the *result* of the edge from the chosen parent
(friction and rate effects make it history dependent), so (1) choose-parent must simulate
every candidate parent, sort by cost and keep the first collision-free candidate *together
with the backbone it produced*, and (2) a rewire is valid only if the rewired edge reproduces
the neighbour's backbone. Neither can be expressed through OMPL's RRTstar callbacks (a
validator cannot write the new state's backbone, and the tree would keep the interpolated
state). Control-based planners (SST, KPIECE) propagate states but do not rewire. So the tree
below is our own; it follows OMPL's RRT* in everything else (steering range, neighbourhood
radius gamma (log n / n)^(1/d), goal biasing, best-cost tracking).

Per iteration:
1. sample q_rand: a goal configuration from PCC inverse kinematics with probability
   `goal_bias`, otherwise uniform in the pressure box;
2. steer from the nearest node: q_new = q_near + clip(q_rand - q_near, +-steer);
3. modified choose-parent: simulate the edge from every node of X_near to q_new without
   collision checks, sort by cost(x) + |q_new - q_x|_1, collision-check in that order and keep
   the first free candidate (its backbone becomes the node's);
4. modified rewire: for each x in X_near, simulate new -> q_x; rewire only if the backbone it
   ends in matches B_x (max plate distance < `backbone_match_tol`), the cost is lower and the
   edge is collision-free; the subtree's costs follow.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from softrod.planning._env import EnvironmentSpec, Obstacles
from softrod.planning._forward import ForwardModel

__all__ = ["RRTStarConfig", "PlanResult", "PressureRRTStar"]

#: A rewire must lower the cost by more than this [Pa] (1e-9 Pa is round-off on ~1e5 Pa sums;
#: it keeps equal-cost ties from flipping back and forth).
_COST_TIE = 1e-9


@dataclass(frozen=True)
class RRTStarConfig:
    """Planner parameters ([CHOICE]s of D.3/D.4 unless noted)."""

    time_budget_s: float = 30.0
    """Wall-clock limit [s] (paper: 10 min)."""
    max_iterations: int = 200_000
    """Iteration limit."""
    refine_iterations: int | None = 1000
    """Iterations to keep improving after the first solution; None runs to the budget."""
    goal_bias: float = 0.2
    """Probability of sampling a goal configuration from PCC IK (D.4)."""
    ik_starts: int = 256
    """Random starts of the IK that builds the goal set."""
    steer_fraction: float = 0.3
    """Largest set-point change per edge and segment, as a fraction of p_max."""
    rewire_factor: float = 1.1
    """Scale of gamma in r_n = gamma (log n / n)^(1/d), gamma = factor * 2 (1 + 1/d)^(1/d)
    * (box volume)^(1/d) (OMPL's RRT* default form)."""
    max_neighbors: int = 24
    """Nearest nodes of the neighbourhood that are simulated (caps the work per step)."""
    backbone_match_tol: float = 0.01
    """Largest plate displacement [m] for which a rewired edge 'reaches the same backbone'."""
    collision_margin: float = 0.03
    """Clearance added to the arm's half width in planning collision checks [m]."""
    seed: int = 0
    """Seed of the planner's random generator when none is passed in."""


@dataclass(frozen=True)
class PlanResult:
    """Outcome of a planning query.

    success, status ('solved' | 'no_solution' | 'start_in_collision' | 'no_goal_samples'),
    message; waypoints : (k+1, n_seg) node set-points [Pa], start first; commands : (n+1,
    n_seg) frame set-points, row 0 the start; predicted : (n+1, m, 3) the model's backbones
    along them; cost : sum of |dp| over the plan [Pa]; plan_time_s, first_solution_s : wall
    times [s]; iterations, n_nodes : tree statistics; model : forward model name.
    """

    success: bool
    status: str
    message: str
    model: str
    waypoints: np.ndarray
    commands: np.ndarray
    predicted: np.ndarray
    cost: float
    plan_time_s: float
    first_solution_s: float | None
    iterations: int
    n_nodes: int
    n_goal_samples: int
    stats: dict = field(default_factory=dict)


class _Tree:
    """Growable arrays of nodes: set-point, previous set-point, backbone, cost, parent."""

    def __init__(self, n_seg: int, m: int, capacity: int = 1024) -> None:
        self.q = np.empty((capacity, n_seg))
        self.q_prev = np.empty((capacity, n_seg))
        self.b = np.empty((capacity, m, 3))
        self.cost = np.empty(capacity)
        self.parent = np.empty(capacity, dtype=np.int64)
        self.children: list[list[int]] = []
        self.n = 0

    def add(
        self, q: np.ndarray, q_prev: np.ndarray, b: np.ndarray, cost: float, parent: int
    ) -> int:
        if self.n == self.q.shape[0]:
            for name in ("q", "q_prev", "b", "cost", "parent"):
                arr = getattr(self, name)
                setattr(self, name, np.concatenate([arr, np.empty_like(arr)], axis=0))
        i = self.n
        self.q[i], self.q_prev[i], self.b[i] = q, q_prev, b
        self.cost[i], self.parent[i] = cost, parent
        self.children.append([])
        if parent >= 0:
            self.children[parent].append(i)
        self.n += 1
        return i

    def rewire(self, child: int, new_parent: int, new_cost: float) -> None:
        old = int(self.parent[child])
        self.children[old].remove(child)
        self.children[new_parent].append(child)
        self.parent[child] = new_parent
        delta = new_cost - self.cost[child]
        stack = [child]
        while stack:
            k = stack.pop()
            self.cost[k] += delta
            stack.extend(self.children[k])

    def path(self, leaf: int) -> list[int]:
        out = [leaf]
        while self.parent[out[-1]] >= 0:
            out.append(int(self.parent[out[-1]]))
        return out[::-1]


class PressureRRTStar:
    """RRT* over signed segment pressures with a (possibly stateful) forward model.

    Parameters
    ----------
    model : forward model (`NoLoadForward` or `NetworkForward`).
    env : environment (goal region and obstacles).
    config : planner parameters.
    """

    def __init__(
        self, model: ForwardModel, env: EnvironmentSpec, config: RRTStarConfig | None = None
    ) -> None:
        self.model = model
        self.env = env
        self.config = config if config is not None else RRTStarConfig()
        self.arm = model.noload.arm
        self.obstacles = Obstacles(env, margin=self.config.collision_margin)
        self.last_tree: _Tree | None = None
        # Planning checks the plate polyline; every edge takes its segment's half width.
        a = self.arm
        self.edge_radius = a.half_width[a.plate_seg[1:]]

    def goal_configurations(self, rng: np.random.Generator) -> np.ndarray:
        """Approximate goal set-points (k, n_seg) from PCC inverse kinematics (D.4)."""
        g = self.env.goal
        ik = self.model.noload.inverse_kinematics(
            np.asarray(g.position),
            rng,
            goal_theta=g.orientation,
            n_starts=self.config.ik_starts,
        )
        return ik.pressures

    def plan(
        self,
        start: np.ndarray | None = None,
        start_backbone: np.ndarray | None = None,
        rng: np.random.Generator | None = None,
    ) -> PlanResult:
        """Plan from set-points `start` (default env.start or 0) with the measured initial
        backbone `start_backbone` (m, 3) (needed by stateful models)."""
        cfg = self.config
        rng = rng if rng is not None else np.random.default_rng(cfg.seed)
        a = self.arm
        t0 = time.perf_counter()
        q0 = np.zeros(a.n_segments) if start is None else a.check_pressures(start, "start")
        b0 = self.model.initial_backbone(q0, start_backbone)
        tree = _Tree(a.n_segments, a.n_plates)
        tree.add(q0, q0, b0, 0.0, -1)
        self.last_tree = tree
        if self.obstacles.collides(b0, self.edge_radius):
            return self._result(
                tree, -1, "start_in_collision", "the start backbone collides", t0, None, 0, 0
            )
        goal_q = self.goal_configurations(rng)
        lo, hi = a.pressure_lower, a.pressure_upper
        steer = cfg.steer_fraction * a.pressure_max
        d = a.n_segments
        volume = float(np.prod(np.maximum(hi - lo, 1e-9)))
        gamma = cfg.rewire_factor * 2.0 * (1.0 + 1.0 / d) ** (1.0 / d) * volume ** (1.0 / d)
        r_cap = float(np.linalg.norm(steer))
        goal_nodes: list[int] = []
        if self.env.goal.contains(b0[-1]):
            goal_nodes.append(0)
        first_solution: float | None = 0.0 if goal_nodes else None
        first_iter = 0 if goal_nodes else -1
        it = 0
        stats = {"edges_simulated": 0, "collision_checks": 0, "rewires": 0}
        for it in range(1, cfg.max_iterations + 1):
            if time.perf_counter() - t0 > cfg.time_budget_s:
                break
            if first_iter >= 0 and cfg.refine_iterations is not None:
                if it - first_iter > cfg.refine_iterations:
                    break
            # 1. Sample.
            if goal_q.shape[0] and rng.random() < cfg.goal_bias:
                q_rand = goal_q[rng.integers(goal_q.shape[0])]
            else:
                q_rand = rng.uniform(lo, hi)
            # 2. Nearest and steer.
            qs = tree.q[: tree.n]
            d2 = np.sum((qs - q_rand) ** 2, axis=1)
            near_i = int(np.argmin(d2))
            q_new = np.clip(qs[near_i] + np.clip(q_rand - qs[near_i], -steer, steer), lo, hi)
            # Neighbourhood X_near (always holds the nearest node).
            n_nodes = tree.n
            radius = min(gamma * (math.log(n_nodes + 1) / (n_nodes + 1)) ** (1.0 / d), r_cap)
            dn = np.sqrt(np.sum((qs - q_new) ** 2, axis=1))
            cand = np.flatnonzero(dn <= radius)
            if near_i not in cand:
                cand = np.append(cand, near_i)
            if cand.shape[0] > cfg.max_neighbors:
                cand = cand[np.argsort(dn[cand])[: cfg.max_neighbors]]
            # 3. Choose parent: simulate all, sort by cost, check collisions in that order.
            k = cand.shape[0]
            q_to = np.repeat(q_new[None], k, axis=0)
            edges = self.model.simulate(tree.q_prev[cand], tree.q[cand], tree.b[cand], q_to)
            stats["edges_simulated"] += k
            cost_c = tree.cost[cand] + np.sum(np.abs(q_new - tree.q[cand]), axis=1)
            new_i = -1
            for c in np.argsort(cost_c, kind="stable"):
                stats["collision_checks"] += 1
                nf = int(edges.n_frames[c])
                if self.obstacles.first_hit(edges.backbones[c], self.edge_radius, nf) >= 0:
                    continue
                q_prev_new = edges.commands[c, nf - 2] if nf >= 2 else tree.q[cand[c]]
                new_i = tree.add(
                    q_new, q_prev_new, edges.backbones[c, nf - 1], float(cost_c[c]), int(cand[c])
                )
                break
            if new_i < 0:
                continue
            # 4. Rewire neighbours whose backbone the new node reproduces.
            others = cand[cand != tree.parent[new_i]]
            if others.shape[0]:
                c_via = tree.cost[new_i] + np.sum(np.abs(tree.q[others] - q_new), axis=1)
                better = others[c_via < tree.cost[others] - _COST_TIE]
                better = np.array(
                    [x for x in better if not self._is_ancestor(tree, x, new_i)], dtype=np.int64
                )
                if better.shape[0]:
                    kb = better.shape[0]
                    redges = self.model.simulate(
                        np.repeat(tree.q_prev[new_i][None], kb, axis=0),
                        np.repeat(q_new[None], kb, axis=0),
                        np.repeat(tree.b[new_i][None], kb, axis=0),
                        tree.q[better],
                    )
                    stats["edges_simulated"] += kb
                    b_end = redges.final_backbones()
                    gap = np.max(
                        np.linalg.norm(b_end[..., :2] - tree.b[better][..., :2], axis=2), axis=1
                    )
                    for r in np.flatnonzero(gap < cfg.backbone_match_tol):
                        x = int(better[r])
                        new_cost = tree.cost[new_i] + float(np.sum(np.abs(tree.q[x] - q_new)))
                        if new_cost >= tree.cost[x] - _COST_TIE:
                            continue
                        stats["collision_checks"] += 1
                        nf = int(redges.n_frames[r])
                        if self.obstacles.first_hit(redges.backbones[r], self.edge_radius, nf) >= 0:
                            continue
                        tree.rewire(x, new_i, new_cost)
                        stats["rewires"] += 1
            if self.env.goal.contains(tree.b[new_i][-1]):
                goal_nodes.append(new_i)
                if first_solution is None:
                    first_solution = time.perf_counter() - t0
                    first_iter = it
        best = -1
        if goal_nodes:
            best = min(goal_nodes, key=lambda i: tree.cost[i])
        status = "solved" if best >= 0 else "no_solution"
        msg = (
            f"reached the goal region with cost {tree.cost[best]:.6g} Pa"
            if best >= 0
            else f"no goal node after {it} iterations ({tree.n} nodes)"
        )
        stats["goal_nodes"] = len(goal_nodes)
        return self._result(tree, best, status, msg, t0, first_solution, it, goal_q.shape[0], stats)

    @staticmethod
    def _is_ancestor(tree: _Tree, x: int, node: int) -> bool:
        k = int(tree.parent[node])
        while k >= 0:
            if k == x:
                return True
            k = int(tree.parent[k])
        return False

    def _result(
        self,
        tree: _Tree,
        best: int,
        status: str,
        message: str,
        t0: float,
        first_solution: float | None,
        iterations: int,
        n_goal: int,
        stats: dict | None = None,
    ) -> PlanResult:
        a = self.arm
        if best >= 0:
            idx = tree.path(best)
            waypoints = tree.q[idx].copy()
            commands = plan_commands(waypoints, self.model.step_per_frame, self.model.hold_frames)
            predicted = self.model.rollout(commands, tree.b[0])
            cost = float(np.sum(np.abs(np.diff(waypoints, axis=0))))
        else:
            waypoints = tree.q[:1].copy()
            commands = waypoints.copy()
            predicted = tree.b[:1].copy()
            cost = math.nan
        return PlanResult(
            success=best >= 0,
            status=status,
            message=message,
            model=self.model.name,
            waypoints=waypoints,
            commands=commands,
            predicted=predicted,
            cost=cost,
            plan_time_s=time.perf_counter() - t0,
            first_solution_s=first_solution,
            iterations=iterations,
            n_nodes=tree.n,
            n_goal_samples=n_goal,
            stats=dict(stats or {}, n_plates=a.n_plates),
        )


def plan_commands(waypoints: np.ndarray, step_per_frame: float, hold_frames: int) -> np.ndarray:
    """Frame set-points (n+1, n_seg) that execute a waypoint sequence edge by edge."""
    from softrod.planning._forward import edge_commands

    rows = [waypoints[:1]]
    for i in range(1, waypoints.shape[0]):
        cmd, nf = edge_commands(
            waypoints[i - 1 : i], waypoints[i : i + 1], step_per_frame, hold_frames
        )
        rows.append(cmd[0, : nf[0]])
    return np.concatenate(rows, axis=0)
