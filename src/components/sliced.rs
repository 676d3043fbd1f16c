//! Work that runs in slices on zero-delay timers, at most [`SLICE_MS`] of it per task, so typing
//! stays responsive while it runs: the planner (`calc::planner::Planning`) and the scaling view
//! (`calc::scaling::Scaling`). A newer edit (or closing the section) drops the work under way
//! and starts another; the work starts in the first slice, off the edit's own task. While it
//! runs, the view shows what there is ([`Interim`]): the rows ranked so far, streamed as they
//! come, else the previous inputs' rows marked as such (never an empty section while typing).

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
    type Out: PartialEq + 'static;
    fn start(framework: Framework, release: &str, raw: &RawInputs) -> Self;
    /// Runs one slice; `true` when the work is done.
    fn step(&mut self) -> bool;
    /// What is done so far, while it runs (`None`: nothing to show yet).
    fn partial(&self) -> Option<Self::Out>;
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
    fn partial(&self) -> Option<Planner> {
        Planning::partial(self)
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
    fn partial(&self) -> Option<Scale> {
        Scaling::partial(self)
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

/// An `Rc` compared by identity (a result is the same result only if it is the same value).
#[derive(Clone)]
pub struct ByPtr<T>(pub Option<Rc<T>>);

impl<T> PartialEq for ByPtr<T> {
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (Some(a), Some(b)) => Rc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        }
    }
}

/// What a view shows while its work runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Interim {
    /// The current inputs' results so far.
    Partial,
    /// The previous inputs' finished results (nothing of the current ones yet).
    Stale,
}

impl Interim {
    /// The `data-plan-state` / `data-scale-state` value.
    pub fn name(self) -> &'static str {
        match self {
            Interim::Partial => "partial",
            Interim::Stale => "stale",
        }
    }
}

/// A sliced view's state: the finished run of the current inputs, or while it runs what to show.
pub struct Progress<O> {
    pub done: Option<Finished<O>>,
    pub interim: Option<(Rc<O>, Interim)>,
}

type Shown<O> = UseStateHandle<Option<(Rc<O>, Interim)>>;

/// The work under way and its timer (dropping the timer cancels the next slice).
struct Running<W: Sliced> {
    start: Option<(Framework, &'static str, Rc<RawInputs>)>,
    work: Option<W>,
    timer: Option<Timeout>,
    spent: f64,
    slices: usize,
    longest: f64,
    /// The partial result last shown (a slice that adds nothing draws nothing).
    shown: Option<Rc<W::Out>>,
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
            shown: None,
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
    interim: Shown<W::Out>,
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
            interim.set(None);
        }
        r.timer = None;
    } else {
        // the rows so far, drawn when they changed
        let partial = r.work.as_ref().and_then(W::partial);
        if let Some(p) = partial.filter(|p| r.shown.as_deref() != Some(p)) {
            let p = Rc::new(p);
            r.shown = Some(p.clone());
            interim.set(Some((p, Interim::Partial)));
        }
        let (running2, done2) = (running.clone(), done.clone());
        r.timer = Some(Timeout::new(0, move || tick(running2, done2, interim)));
    }
}

/// Runs `W` on the inputs while `open`, again after each change: the finished run, or while it
/// runs what to show meanwhile ([`Progress`]; nothing when closed).
#[hook]
pub fn use_sliced<W: Sliced>(
    framework: Framework,
    release: &'static str,
    inputs: Rc<RawInputs>,
    open: bool,
) -> Progress<W::Out> {
    let done = use_state(|| None::<Finished<W::Out>>);
    let interim: Shown<W::Out> = use_state(|| None);
    let running = use_mut_ref(Running::<W>::default);
    {
        let (done, interim) = (done.clone(), interim.clone());
        use_effect_with(
            (framework, release, inputs, open),
            move |(fw, release, inputs, open)| {
                *running.borrow_mut() = Running::default();
                // the last rows stay, marked as the previous inputs', until new ones come
                let last = (*done).as_ref().map(|d| d.out.clone());
                let last = last.or_else(|| (*interim).as_ref().map(|(o, _)| o.clone()));
                interim.set(last.filter(|_| *open).map(|o| (o, Interim::Stale)));
                done.set(None);
                if *open {
                    running.borrow_mut().start = Some((*fw, *release, inputs.clone()));
                    let (r, d, i) = (running.clone(), done.clone(), interim.clone());
                    running.borrow_mut().timer = Some(Timeout::new(0, move || tick(r, d, i)));
                }
            },
        );
    }
    Progress {
        done: (*done).clone(),
        interim: (*interim).clone(),
    }
}
