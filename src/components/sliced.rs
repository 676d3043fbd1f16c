//! Work that runs in slices on zero-delay timers, at most [`SLICE_MS`] of it per task, so typing
//! stays responsive while it runs: the planner (`calc::planner::Planning`) and the scaling view
//! (`calc::scaling::Scaling`). A newer edit (or closing the section) drops the work under way
//! and starts another; the work starts in the first slice, off the edit's own task.

use std::cell::RefCell;
use std::rc::Rc;

use gloo::timers::callback::Timeout;
use yew::prelude::*;

use crate::calc::planner::{Planner, Planning};
use crate::calc::scaling::{Scale, Scaling};
use crate::calc::{Framework, RawInputs};

/// The most work one task does before it yields to the page.
pub const SLICE_MS: f64 = 4.0;

/// Work done one slice at a time.
pub trait Sliced: Sized + 'static {
    type Out: 'static;
    fn start(framework: Framework, release: &str, raw: &RawInputs) -> Self;
    /// Runs one slice; `true` when the work is done.
    fn step(&mut self) -> bool;
    fn finish(self) -> Self::Out;
}

impl Sliced for Planning {
    type Out = Planner;
    fn start(framework: Framework, release: &str, raw: &RawInputs) -> Self {
        Planning::new(framework, release, raw)
    }
    fn step(&mut self) -> bool {
        Planning::step(self)
    }
    fn finish(self) -> Planner {
        Planning::finish(self)
    }
}

impl Sliced for Scaling {
    type Out = Scale;
    fn start(framework: Framework, release: &str, raw: &RawInputs) -> Self {
        Scaling::new(framework, release, raw)
    }
    fn step(&mut self) -> bool {
        Scaling::step(self)
    }
    fn finish(self) -> Scale {
        Scaling::finish(self)
    }
}

/// A finished run: its output, the work's milliseconds summed over its tasks, the tasks and the
/// longest (the `data-compute-ms`, `data-slices` and `data-longest-slice-ms` of its section).
pub struct Finished<O> {
    pub out: Rc<O>,
    pub ms: f64,
    pub slices: usize,
    pub longest: f64,
}

impl<O> Clone for Finished<O> {
    fn clone(&self) -> Self {
        Finished {
            out: self.out.clone(),
            ..*self
        }
    }
}

impl<O> PartialEq for Finished<O> {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.out, &other.out)
    }
}

/// The work under way and its timer (dropping the timer cancels the next slice).
struct Running<W: Sliced> {
    start: Option<(Framework, &'static str, Rc<RawInputs>)>,
    work: Option<W>,
    timer: Option<Timeout>,
    spent: f64,
    slices: usize,
    longest: f64,
}

impl<W: Sliced> Default for Running<W> {
    fn default() -> Self {
        Running {
            start: None,
            work: None,
            timer: None,
            spent: 0.0,
            slices: 0,
            longest: 0.0,
        }
    }
}

fn now() -> f64 {
    gloo::utils::window().performance().map_or(0.0, |p| p.now())
}

/// Runs slices of `running`'s work for up to [`SLICE_MS`], then yields; sets `done` at the end.
fn tick<W: Sliced>(
    running: Rc<RefCell<Running<W>>>,
    done: UseStateHandle<Option<Finished<W::Out>>>,
) {
    let t0 = now();
    let mut r = running.borrow_mut();
    if let Some((fw, release, inputs)) = r.start.take() {
        r.work = Some(W::start(fw, release, &inputs));
    }
    let Some(work) = r.work.as_mut() else {
        return;
    };
    let mut finished = false;
    while now() - t0 < SLICE_MS {
        if work.step() {
            finished = true;
            break;
        }
    }
    let took = now() - t0;
    r.spent += took;
    r.slices += 1;
    r.longest = r.longest.max(took);
    if finished {
        let out = r.work.take().map(W::finish);
        if let Some(out) = out {
            done.set(Some(Finished {
                out: Rc::new(out),
                ms: r.spent,
                slices: r.slices,
                longest: r.longest,
            }));
        }
        r.timer = None;
    } else {
        let (running2, done2) = (running.clone(), done.clone());
        r.timer = Some(Timeout::new(0, move || tick(running2, done2)));
    }
}

/// Runs `W` on the inputs while `open`, again after each change; the finished run, or `None`
/// while it runs (or when closed).
#[hook]
pub fn use_sliced<W: Sliced>(
    framework: Framework,
    release: &'static str,
    inputs: Rc<RawInputs>,
    open: bool,
) -> Option<Finished<W::Out>> {
    let done = use_state(|| None::<Finished<W::Out>>);
    let running = use_mut_ref(Running::<W>::default);
    {
        let done = done.clone();
        use_effect_with(
            (framework, release, inputs, open),
            move |(fw, release, inputs, open)| {
                *running.borrow_mut() = Running::default();
                done.set(None);
                if *open {
                    running.borrow_mut().start = Some((*fw, *release, inputs.clone()));
                    let (r, d) = (running.clone(), done.clone());
                    running.borrow_mut().timer = Some(Timeout::new(0, move || tick(r, d)));
                }
            },
        );
    }
    (*done).clone()
}
