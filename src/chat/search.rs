//! A chat turn with the tree search (`/arch mcts`): the Planner turns the
//! request into 1–7 steps; the search tries candidate codes for each step in
//! forks of the chat's sandbox and keeps the best path, which is then run
//! once in the chat's own namespace (outputs of earlier turns stay). Only
//! the outcome enters the conversation; every node is in the transcript and
//! the tree in the session folder's `work/tree.json`.

use std::sync::atomic::Ordering;

use super::engine::{keep_cell, sandbox_tools, AgentEvent, ChatEngine, ChatModel, TurnEnd};
use crate::agent::converse::{AgentLimits, Ending, Stop};
use crate::agent::dual::DualInputs;
use crate::agent::mcts::{self, MctsLimits, SearchHooks, SearchInputs};
use crate::interrupt::CellStopper;
use crate::llm::{Message, Role};

impl ChatEngine {
    /// One turn: plan, search, keep the best path.
    pub(super) fn search_turn(
        &mut self,
        request: &str,
        ev: &mut dyn FnMut(AgentEvent<'_>),
    ) -> TurnEnd {
        let (packages, blocked) = self.zygote_info();
        let task = DualInputs {
            system: self.system_message().content.unwrap_or_default(),
            task_prompt: self.planner_context(request),
            packages,
            blocked,
        };
        let interrupt = self.interrupt;
        let limits = AgentLimits {
            max_rounds: self.options.max_rounds,
            ..AgentLimits::default()
        };
        let stop = move || {
            interrupt
                .swap(false, Ordering::SeqCst)
                .then(|| Ending::Interrupted("the user interrupted".into()))
        };
        let watch = move |canceller| {
            CellStopper::watch(canceller, move || interrupt.load(Ordering::SeqCst))
        };
        let result = {
            let mut model = ChatModel {
                backend: &mut self.backend,
                reopen: &self.reopen,
                interrupt,
            };
            let (mut toolbox, _stopper) = sandbox_tools(
                &mut self.session,
                self.saved.data_dir.clone(),
                self.options.docs.as_deref(),
                self.checks.clone(),
                false,
                interrupt,
            );
            mcts::run(
                &mut model,
                &mut toolbox,
                &mut self.transcript,
                &SearchInputs {
                    task: &task,
                    min_steps: 1,
                    chat: true,
                },
                &limits,
                &MctsLimits::default(),
                &SearchHooks {
                    stop: &stop,
                    watch: &watch,
                },
                ev,
            )
        };
        self.add_usage(result.outcome.usage);
        for code in &result.path {
            keep_cell(&mut self.saved.cells, &mut self.last_failed, code, true);
        }
        let summary = result.outcome.summary.clone().unwrap_or_default();
        let steps = result.path.len();
        let mut text = format!("{summary}.");
        if steps > 0 {
            text.push_str(&format!(
                " The sandbox holds the result of the chosen path ({steps} cell(s)); `gisclaw tree show {}` prints the tree.",
                self.workdir().display()
            ));
        }
        ev(AgentEvent::Text(&text));
        ev(AgentEvent::MessageDone { round: 0 });
        self.saved
            .messages
            .push(Message::text(Role::Assistant, text));
        self.turn_end(Stop::End(result.outcome.ending), ev)
    }
}
