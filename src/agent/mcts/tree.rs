//! The search tree of `--arch mcts`: nodes are candidate codes for one plan
//! step (the depth), selection is P-UCB as in GeoAgent (after Zhang et al.,
//! "Planning with large language models for code generation"), and a
//! node's `Q` is the best reward seen in its subtree.
//!
//! P-UCB of child `a` of `s`: `Q(a) + β(N)·P(a)·√(ln N) / (1 + n(a))` with
//! `β(N) = ln((N + c_base + 1) / c_base) + c`, `N` the parent's visits and
//! `n(a)` the child's. Every node starts with one visit (GeoAgent's
//! convention), so `ln N` is defined from the first selection.

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
            }],
            steps,
            p_ucb,
        }
    }

    /// Adds a pending child of `parent` with `code` and returns its id.
    pub fn add_child(&mut self, parent: usize, code: String, prior: f64) -> usize {
        let id = self.nodes.len();
        let step = self.nodes[parent].step + 1;
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
        });
        self.nodes[parent].children.push(id);
        id
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

    /// The path from the root's first child down to `id`.
    pub fn path(&self, id: usize) -> Vec<usize> {
        let mut path = Vec::new();
        let mut at = Some(id);
        while let Some(i) = at {
            if i != 0 {
                path.push(i);
            }
            at = self.nodes[i].parent;
        }
        path.reverse();
        path
    }

    /// The node to keep: the highest reward, then the deepest, then the
    /// earliest; only nodes that ran count (the root when none did).
    pub fn best(&self) -> usize {
        self.nodes
            .iter()
            .filter(|n| n.state == NodeState::Ran)
            .max_by(|a, b| {
                let (ra, rb) = (a.reward.unwrap_or(0.0), b.reward.unwrap_or(0.0));
                ra.total_cmp(&rb)
                    .then(a.step.cmp(&b.step))
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
            out.push_str(&format!(
                "{}{mark} #{id} step {} {state} · reward {} · visits {} · Q {:.2} · {}\n",
                "  ".repeat(depth),
                n.step,
                n.reward.map_or("–".to_string(), |r| format!("{r:.2}")),
                n.visits,
                n.q,
                crate::util::clip(first.trim(), 60)
            ));
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
    fn the_tree_round_trips_through_json() {
        let t = small();
        let text = serde_json::to_string(&t).unwrap();
        let back: Tree = serde_json::from_str(&text).unwrap();
        assert_eq!(back.nodes.len(), 3);
        assert_eq!(back.nodes[2].state, NodeState::Failed);
        assert!(text.contains("\"state\":\"failed\""), "{text}");
    }
}
