//! The search tree of `--arch mcts`: nodes are candidate codes for one plan
//! step (the depth), selection is P-UCB as in GeoAgent (after Zhang et al.,
//! "Planning with large language models for code generation"), and a
//! node's `Q` is the best reward seen in its subtree.
//!
//! P-UCB of child `a` of `s`: `Q(a) + β(N)·P(a)·√(ln N) / (1 + n(a))` with
//! `β(N) = ln((N + c_base + 1) / c_base) + c`, `N` the parent's visits and
//! `n(a)` the child's. Every node starts with one visit (GeoAgent's
//! convention), so `ln N` is defined from the first selection.
//!
//! A node is a sample of an expansion, a repair of a failed node (its
//! child, for the same step, run under the same state), or a step a
//! rollout completed and the search kept. The state a node runs under is
//! its nearest ancestor that is not being repaired ([`Tree::state_of`]);
//! a path is a chain of such states.

use serde::{Deserialize, Serialize};

use crate::sandbox::Finding;

/// Constants of P-UCB (GeoAgent's defaults: 10 and 4).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PUcb {
    /// `c_base`: how slowly β grows with the parent's visits.
    pub c_base: f64,
    /// `c`: β's floor, the weight of exploration.
    pub c: f64,
}

impl Default for PUcb {
    fn default() -> Self {
        PUcb {
            c_base: 10.0,
            c: 4.0,
        }
    }
}

impl PUcb {
    /// The score of a child with value `q`, prior `prior` and `visits`,
    /// under a parent visited `parent_visits` times.
    pub fn score(&self, q: f64, prior: f64, visits: u32, parent_visits: u32) -> f64 {
        let n = f64::from(parent_visits.max(1));
        let beta = ((n + self.c_base + 1.0) / self.c_base).ln() + self.c;
        q + beta * prior * n.ln().sqrt() / (1.0 + f64::from(visits))
    }
}

/// What became of a node's code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeState {
    /// The root: the session before the first step.
    Root,
    /// Sampled, not run yet.
    Pending,
    /// Ran without error in a snapshot of its parent.
    Ran,
    /// Ran and failed (an exception, a timeout, a crash).
    Failed,
    /// Not run: the static analysis found the code cannot run (after its
    /// one repair request).
    Pruned,
}

/// How a node came to be.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// One of an expansion's candidates.
    #[default]
    Sample,
    /// The model's fix of its parent, which failed, was pruned or wrote
    /// outputs that failed their checks: same step, same state.
    Repair,
    /// A step of a rollout that completed the task, kept in the tree.
    Rollout,
}

/// What a rollout from a node did: the remaining steps asked for in one
/// completion and run in a throwaway fork of the node's session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rollout {
    /// Steps the completion was asked for (the rest of the plan).
    pub asked: usize,
    /// Steps the completion gave (its `# %% step` parts).
    pub given: usize,
    /// Of them, how many ran cleanly, in order, before the first failure.
    pub ran: usize,
    /// The first failure's error line.
    pub error: Option<String>,
    /// When it ran to the last step: whether every declared output exists
    /// with real content.
    pub outputs_present: Option<bool>,
    /// Output-check warnings of the files it wrote.
    pub warnings: Vec<String>,
    /// The reward it gave the node.
    pub reward: f64,
    /// Model and sandbox time it took, in milliseconds.
    pub took_ms: u64,
}

/// One node: a candidate code for step `step` of the plan.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Node {
    /// Its index in the tree.
    pub id: usize,
    /// Its parent (none for the root).
    pub parent: Option<usize>,
    /// Its children, in the order they were sampled.
    pub children: Vec<usize>,
    /// The plan step it does (1-based; 0 for the root).
    pub step: usize,
    /// The candidate code.
    pub code: String,
    /// The prior P (uniform over a parent's children unless the server
    /// gave token log-probabilities).
    pub prior: f64,
    /// Times selection passed through it (starts at 1).
    pub visits: u32,
    /// The best reward seen in its subtree (its own included).
    pub q: f64,
    /// Its own reward, once it ran or was pruned.
    pub reward: Option<f64>,
    /// What became of it.
    pub state: NodeState,
    /// The static analysis findings that pruned it or came with it.
    pub findings: Vec<Finding>,
    /// What running it showed (the observation the model reads).
    pub observation: String,
    /// How it came to be.
    #[serde(default)]
    pub origin: Origin,
    /// The failures under the same state that the request which made it
    /// named (one line each: the failing call and its error).
    #[serde(default)]
    pub told: Vec<String>,
    /// Output-check warnings of the declared outputs it wrote.
    #[serde(default)]
    pub warnings: Vec<String>,
    /// Its rollout, when `--mcts-rollout` estimated its reward.
    #[serde(default)]
    pub rollout: Option<Rollout>,
    /// The files under `pred_results/` its run created or changed.
    #[serde(default)]
    pub wrote: Vec<String>,
}

/// The tree.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Tree {
    /// Every node; the root is node 0.
    pub nodes: Vec<Node>,
    /// The plan steps (the depth of a complete path).
    pub steps: usize,
    /// The selection constants.
    pub p_ucb: PUcb,
}

impl Tree {
    /// A tree for a plan of `steps` steps: the root alone.
    pub fn new(steps: usize, p_ucb: PUcb) -> Tree {
        Tree {
            nodes: vec![Node {
                id: 0,
                parent: None,
                children: Vec::new(),
                step: 0,
                code: String::new(),
                prior: 1.0,
                visits: 1,
                q: 0.0,
                reward: Some(0.0),
                state: NodeState::Root,
                findings: Vec::new(),
                observation: String::new(),
                origin: Origin::Sample,
                told: Vec::new(),
                warnings: Vec::new(),
                rollout: None,
                wrote: Vec::new(),
            }],
            steps,
            p_ucb,
        }
    }

    /// Adds a pending sample for the step after `parent`'s and returns its id.
    pub fn add_child(&mut self, parent: usize, code: String, prior: f64) -> usize {
        let step = self.nodes[parent].step + 1;
        self.push(parent, step, code, prior, Origin::Sample)
    }

    /// Adds a pending repair of `failed` (the same step, run under the
    /// same state) and returns its id.
    pub fn add_repair(&mut self, failed: usize, code: String) -> usize {
        let step = self.nodes[failed].step;
        self.push(failed, step, code, 1.0, Origin::Repair)
    }

    /// Adds a step a rollout ran, after `parent`, and returns its id.
    pub fn add_rollout_step(&mut self, parent: usize, code: String) -> usize {
        let step = self.nodes[parent].step + 1;
        self.push(parent, step, code, 1.0, Origin::Rollout)
    }

    fn push(
        &mut self,
        parent: usize,
        step: usize,
        code: String,
        prior: f64,
        origin: Origin,
    ) -> usize {
        let id = self.nodes.len();
        self.nodes.push(Node {
            id,
            parent: Some(parent),
            children: Vec::new(),
            step,
            code,
            prior,
            visits: 1,
            q: 0.0,
            reward: None,
            state: NodeState::Pending,
            findings: Vec::new(),
            observation: String::new(),
            origin,
            told: Vec::new(),
            warnings: Vec::new(),
            rollout: None,
            wrote: Vec::new(),
        });
        self.nodes[parent].children.push(id);
        id
    }

    /// The node whose session `id` runs in: its parent, or for a repair
    /// the state the repaired node ran under.
    pub fn state_of(&self, id: usize) -> usize {
        let mut at = id;
        while self.nodes[at].origin == Origin::Repair {
            at = self.nodes[at].parent.unwrap_or(0);
        }
        self.nodes[at].parent.unwrap_or(0)
    }

    /// How many repairs in a row led to `id` (0 for a sample).
    pub fn repairs_above(&self, id: usize) -> usize {
        let mut n = 0;
        let mut at = id;
        while self.nodes[at].origin == Origin::Repair {
            n += 1;
            at = self.nodes[at].parent.unwrap_or(0);
        }
        n
    }

    /// The nodes tried under `state` that failed, were pruned or wrote
    /// outputs with warnings, in the order they were made.
    pub fn failed_under(&self, state: usize) -> Vec<usize> {
        self.nodes
            .iter()
            .filter(|n| n.id != 0 && self.state_of(n.id) == state)
            .filter(|n| {
                matches!(n.state, NodeState::Failed | NodeState::Pruned) || !n.warnings.is_empty()
            })
            .map(|n| n.id)
            .collect()
    }

    /// The nodes tried under `state`, in the order they were made.
    pub fn tried_under(&self, state: usize) -> Vec<usize> {
        self.nodes
            .iter()
            .filter(|n| n.id != 0 && self.state_of(n.id) == state)
            .map(|n| n.id)
            .collect()
    }

    /// Whether `id` can have children: the root, or a node that ran above
    /// the last step.
    pub fn expandable(&self, id: usize) -> bool {
        let n = &self.nodes[id];
        matches!(n.state, NodeState::Root | NodeState::Ran) && n.step < self.steps
    }

    /// Selection: from the root, the child of highest P-UCB among those
    /// that can still lead somewhere, down to a node without such
    /// children. `None` when no node can be expanded any more.
    pub fn select(&self) -> Option<usize> {
        let mut at = 0;
        loop {
            let here = &self.nodes[at];
            let open: Vec<&Node> = here
                .children
                .iter()
                .map(|c| &self.nodes[*c])
                .filter(|c| self.leads_somewhere(c.id))
                .collect();
            let best = open.iter().max_by(|a, b| {
                let sa = self.p_ucb.score(a.q, a.prior, a.visits, here.visits);
                let sb = self.p_ucb.score(b.q, b.prior, b.visits, here.visits);
                // The earlier-sampled child wins a tie.
                sa.total_cmp(&sb).then(b.id.cmp(&a.id))
            });
            match best {
                Some(child) => at = child.id,
                None => return self.expandable(at).then_some(at),
            }
        }
    }

    /// Whether `id` or a node below it can still be expanded.
    fn leads_somewhere(&self, id: usize) -> bool {
        self.expandable(id)
            || self.nodes[id]
                .children
                .iter()
                .any(|c| self.leads_somewhere(*c))
    }

    /// Records `reward` for node `id` and takes it up the path: every
    /// node on it gains a visit and keeps the best reward seen below it.
    pub fn backprop(&mut self, id: usize, reward: f64) {
        self.nodes[id].reward = Some(reward);
        let mut at = Some(id);
        while let Some(i) = at {
            let node = &mut self.nodes[i];
            node.visits += 1;
            node.q = node.q.max(reward);
            at = node.parent;
        }
    }

    /// The cells that lead to `id`, from the first step down: each node's
    /// state, up to the root (a repaired node is not on it, its repair is).
    pub fn path(&self, id: usize) -> Vec<usize> {
        let mut path = Vec::new();
        let mut at = id;
        while at != 0 {
            path.push(at);
            at = self.state_of(at);
        }
        path.reverse();
        path
    }

    /// The node to keep: a complete solution (reward 1), then the deepest,
    /// then the highest reward, then the earliest; only nodes that ran
    /// count (the root when none did).
    pub fn best(&self) -> usize {
        self.nodes
            .iter()
            .filter(|n| n.state == NodeState::Ran)
            .max_by(|a, b| {
                let (ra, rb) = (a.reward.unwrap_or(0.0), b.reward.unwrap_or(0.0));
                (ra >= 1.0)
                    .cmp(&(rb >= 1.0))
                    .then(a.step.cmp(&b.step))
                    .then(ra.total_cmp(&rb))
                    .then(b.id.cmp(&a.id))
            })
            .map_or(0, |n| n.id)
    }

    /// Nodes that ran, failed and were pruned.
    pub fn counts(&self) -> (usize, usize, usize) {
        let count = |s: NodeState| self.nodes.iter().filter(|n| n.state == s).count();
        (
            count(NodeState::Ran),
            count(NodeState::Failed),
            count(NodeState::Pruned),
        )
    }

    /// Repair nodes, and of them those that ran cleanly.
    pub fn repairs(&self) -> (usize, usize) {
        let repairs = self.nodes.iter().filter(|n| n.origin == Origin::Repair);
        let ran = repairs
            .clone()
            .filter(|n| n.state == NodeState::Ran)
            .count();
        (repairs.count(), ran)
    }

    /// Expansions made: nodes that were asked for samples.
    pub fn expansions(&self) -> usize {
        self.nodes
            .iter()
            .filter(|n| {
                n.children
                    .iter()
                    .any(|c| self.nodes[*c].origin == Origin::Sample)
            })
            .count()
    }

    /// Nodes whose reward a rollout estimated.
    pub fn rollouts(&self) -> usize {
        self.nodes.iter().filter(|n| n.rollout.is_some()).count()
    }

    /// Every count of the search: nodes (the root not counted), expansions,
    /// ran, failed, pruned, repairs and rollouts.
    pub fn search_counts(&self) -> crate::record::SearchCounts {
        let (ran, failed, pruned) = self.counts();
        let (repairs, repairs_ran) = self.repairs();
        crate::record::SearchCounts {
            nodes: self.nodes.len().saturating_sub(1),
            expansions: self.expansions(),
            ran,
            failed,
            pruned,
            repairs,
            repairs_ran,
            rollouts: self.rollouts(),
        }
    }

    /// The tree as indented lines (`gisclaw tree show`): each node's step,
    /// state, reward, visits and Q, its first code line, the chosen path
    /// marked with `*`.
    pub fn render(&self, chosen: usize) -> String {
        let on_path: Vec<usize> = self.path(chosen);
        let mut out = String::new();
        self.render_node(0, 0, &on_path, &mut out);
        out
    }

    fn render_node(&self, id: usize, depth: usize, path: &[usize], out: &mut String) {
        let n = &self.nodes[id];
        let mark = if path.contains(&id) { "*" } else { " " };
        if id == 0 {
            out.push_str(&format!(
                "root · {} step(s) · {} node(s)\n",
                self.steps,
                self.nodes.len() - 1
            ));
        } else {
            let state = match n.state {
                NodeState::Root => "root",
                NodeState::Pending => "pending",
                NodeState::Ran => "ran",
                NodeState::Failed => "failed",
                NodeState::Pruned => "pruned",
            };
            let first = n.code.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            let origin = match (n.origin, n.parent) {
                (Origin::Repair, Some(p)) => format!(" (repair of #{p})"),
                (Origin::Rollout, _) => " (from a rollout)".to_string(),
                _ => String::new(),
            };
            let pad = "  ".repeat(depth);
            out.push_str(&format!(
                "{pad}{mark} #{id} step {}{origin} {state} · reward {} · visits {} · Q {:.2} · {}\n",
                n.step,
                n.reward.map_or("–".to_string(), |r| format!("{r:.2}")),
                n.visits,
                n.q,
                crate::util::clip(first.trim(), 60)
            ));
            if matches!(n.state, NodeState::Failed | NodeState::Pruned) {
                let why = match n.findings.iter().find(|f| f.certain) {
                    Some(f) if n.state == NodeState::Pruned => {
                        format!("line {}: {}", f.line, f.message)
                    }
                    _ => crate::observation::error_line(&n.observation).to_string(),
                };
                out.push_str(&format!(
                    "{pad}     error: {}\n",
                    crate::util::clip(&why, 100)
                ));
            }
            for w in &n.warnings {
                out.push_str(&format!(
                    "{pad}     output check: {}\n",
                    crate::util::clip(w, 100)
                ));
            }
            for line in &n.told {
                out.push_str(&format!(
                    "{pad}     told: {}\n",
                    crate::util::clip(line, 100)
                ));
            }
            if let Some(r) = &n.rollout {
                let end = match (&r.error, r.outputs_present) {
                    (Some(e), _) => format!(" · stopped: {}", crate::util::clip(e, 60)),
                    (None, Some(true)) => " · outputs present".to_string(),
                    (None, Some(false)) => " · outputs missing".to_string(),
                    (None, None) => String::new(),
                };
                out.push_str(&format!(
                    "{pad}     rollout: {} of {} remaining step(s) ran{end} · reward {:.2}\n",
                    r.ran, r.asked, r.reward
                ));
            }
        }
        for c in &n.children {
            self.render_node(*c, depth + 1, path, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p_ucb_follows_geoagents_formula() {
        let p = PUcb::default();
        // N = 1: ln 1 = 0, only Q counts.
        assert_eq!(p.score(0.5, 1.0, 1, 1), 0.5);
        // N = 9, n = 1, P = 0.5, Q = 0.
        let beta = ((9.0 + 10.0 + 1.0) / 10.0_f64).ln() + 4.0;
        let want = beta * 0.5 * 9.0_f64.ln().sqrt() / 2.0;
        assert!((p.score(0.0, 0.5, 1, 9) - want).abs() < 1e-12);
        // More visits, less exploration bonus.
        assert!(p.score(0.0, 0.5, 1, 9) > p.score(0.0, 0.5, 5, 9));
    }

    /// Root with two children of step 1; the first ran, the second failed.
    fn small() -> Tree {
        let mut t = Tree::new(2, PUcb::default());
        let a = t.add_child(0, "a = 1".into(), 0.5);
        let b = t.add_child(0, "b = 1/0".into(), 0.5);
        t.nodes[a].state = NodeState::Ran;
        t.backprop(a, 0.5);
        t.nodes[b].state = NodeState::Failed;
        t.backprop(b, 0.0);
        t
    }

    #[test]
    fn backprop_keeps_the_best_reward_below_and_counts_visits() {
        let t = small();
        assert_eq!(t.nodes[0].visits, 3);
        assert_eq!(t.nodes[0].q, 0.5);
        assert_eq!((t.nodes[1].q, t.nodes[1].visits), (0.5, 2));
        assert_eq!((t.nodes[2].q, t.nodes[2].visits), (0.0, 2));
    }

    #[test]
    fn selection_skips_dead_branches_and_stops_where_it_can_expand() {
        let mut t = small();
        // The failed child cannot be expanded: selection goes to the one that ran.
        assert_eq!(t.select(), Some(1));
        // A last-step node that ran is a leaf: its parent stays the place to expand.
        let c = t.add_child(1, "done".into(), 1.0);
        t.nodes[c].state = NodeState::Ran;
        t.backprop(c, 1.0);
        assert_eq!(t.select(), Some(1));
        assert_eq!(t.best(), c);
        assert_eq!(t.path(c), vec![1, c]);
        // Nothing left to expand once every open node is closed.
        t.nodes[1].state = NodeState::Failed;
        t.nodes[0].state = NodeState::Pruned;
        assert_eq!(t.select(), None);
    }

    #[test]
    fn selection_prefers_reward_then_the_unvisited() {
        let mut t = Tree::new(3, PUcb::default());
        let a = t.add_child(0, "a".into(), 0.5);
        let b = t.add_child(0, "b".into(), 0.5);
        for id in [a, b] {
            t.nodes[id].state = NodeState::Ran;
        }
        t.backprop(a, 1.0 / 3.0);
        t.backprop(b, 1.0 / 3.0);
        // A tie goes to the earlier child.
        assert_eq!(t.select(), Some(a));
        // a's subtree finds more: it is chosen again.
        let a1 = t.add_child(a, "a1".into(), 1.0);
        t.nodes[a1].state = NodeState::Ran;
        t.backprop(a1, 2.0 / 3.0);
        assert_eq!(t.select(), Some(a1));
        let rendered = t.render(a1);
        assert!(rendered.contains("* #1 step 1 ran"), "{rendered}");
        assert!(rendered.contains("    * #3 step 2 ran"), "{rendered}");
        assert!(rendered.contains("  #2 step 1 ran"), "{rendered}");
        let counts = t.counts();
        assert_eq!(counts, (3, 0, 0));
    }

    #[test]
    fn a_repair_runs_under_the_state_of_what_it_repairs_and_replaces_it_on_the_path() {
        let mut t = small();
        // #2 failed; its repair #3 failed too; #4 repairs #3 and runs.
        let r1 = t.add_repair(2, "b = 1/0.5".into());
        t.nodes[r1].state = NodeState::Failed;
        t.backprop(r1, 0.0);
        let r2 = t.add_repair(r1, "b = 1".into());
        t.nodes[r2].state = NodeState::Ran;
        t.backprop(r2, 0.5);
        assert_eq!((t.nodes[r1].step, t.nodes[r2].step), (1, 1));
        assert_eq!((t.state_of(r1), t.state_of(r2)), (0, 0));
        assert_eq!((t.repairs_above(2), t.repairs_above(r2)), (0, 2));
        assert_eq!(t.failed_under(0), vec![2, r1]);
        // A step after the repair runs under the repair's state.
        let next = t.add_child(r2, "c = b".into(), 1.0);
        assert_eq!((t.nodes[next].step, t.state_of(next)), (2, r2));
        assert_eq!(t.path(next), vec![r2, next]);
        assert_eq!(t.repairs(), (2, 1));
        let rendered = t.render(next);
        assert!(
            rendered.contains("#3 step 1 (repair of #2) failed"),
            "{rendered}"
        );
        assert!(
            rendered.contains("* #4 step 1 (repair of #3) ran"),
            "{rendered}"
        );
    }

    #[test]
    fn the_best_node_is_complete_first_then_deepest_then_likeliest() {
        let mut t = Tree::new(3, PUcb::default());
        let a = t.add_child(0, "a".into(), 0.5);
        let b = t.add_child(a, "b".into(), 0.5);
        let c = t.add_child(0, "c".into(), 0.5);
        for (id, reward) in [(a, 0.9), (b, 0.6), (c, 0.95)] {
            t.nodes[id].state = NodeState::Ran;
            t.backprop(id, reward);
        }
        // A rollout's estimate does not beat a deeper node that ran.
        assert_eq!(t.best(), b);
        let done = t.add_rollout_step(c, "done".into());
        t.nodes[done].state = NodeState::Ran;
        t.backprop(done, 1.0);
        assert_eq!(t.best(), done);
        assert_eq!(t.path(done), vec![c, done]);
    }

    #[test]
    fn an_old_tree_without_origins_reads_as_samples() {
        let text = r#"{"nodes":[{"id":0,"parent":null,"children":[],"step":0,"code":"","prior":1.0,"visits":1,"q":0.0,"reward":0.0,"state":"root","findings":[],"observation":""}],"steps":3,"p_ucb":{"c_base":10.0,"c":4.0}}"#;
        let t: Tree = serde_json::from_str(text).unwrap();
        assert_eq!(t.nodes[0].origin, Origin::Sample);
        assert!(t.nodes[0].rollout.is_none());
    }

    #[test]
    fn the_tree_round_trips_through_json() {
        let t = small();
        let text = serde_json::to_string(&t).unwrap();
        let back: Tree = serde_json::from_str(&text).unwrap();
        assert_eq!(back.nodes.len(), 3);
        assert_eq!(back.nodes[2].state, NodeState::Failed);
        assert!(text.contains("\"state\":\"failed\""), "{text}");
    }
}
