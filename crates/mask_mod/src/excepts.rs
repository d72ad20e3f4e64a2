//! `try` / `except` / `else` / `finally` and `raise`, as Python runs them: an `except` clause
//! runs only when what its `try` raised is of the type it names (or derives from it). Where the
//! reader cannot tell the type of what was raised, or the type a clause names, it refuses.

use std::rc::Rc;

use super::ast::{Expr, Handler, Pos, Stmt};
use super::interp::{Ctx, Flow};
use super::rt::{Eval, Fail, FailKind, Interp, R, limit, unavailable_msg, unsup};
use super::types::{ExcClass, catches, exception_parent, handler_types, not_exception_class, raised_type};
use super::value::{Unavailable, Value};

impl Interp {
    pub(super) fn exec_try(
        &mut self,
        body: &[Stmt],
        handlers: &[Handler],
        orelse: &[Stmt],
        fin: &[Stmt],
        ctx: &Ctx,
        pos: Pos,
    ) -> R<Flow> {
        self.in_try += u32::from(!handlers.is_empty());
        let ran = self.exec_block(body, ctx);
        self.in_try -= u32::from(!handlers.is_empty());
        let outcome = match ran {
            Ok(Flow::Normal) => self.exec_block(orelse, ctx),
            Ok(flow) => Ok(flow),
            Err(f) if f.kind == FailKind::Exception && !handlers.is_empty() => self.handle(f, handlers, ctx, pos),
            Err(f) => Err(f),
        };
        if fin.is_empty() {
            return outcome;
        }
        match outcome {
            // What the reader cannot run stops here: `finally` is not run past it.
            Err(f) if f.kind != FailKind::Exception => Err(f),
            outcome => match self.exec_block(fin, ctx)? {
                Flow::Normal => outcome,
                // `return`, `break` or `continue` in `finally` wins over what was raised.
                other => Ok(other),
            },
        }
    }

    /// The first `except` clause that matches `f` runs; with none, `f` goes on.
    fn handle(&mut self, f: Fail, handlers: &[Handler], ctx: &Ctx, pos: Pos) -> R<Flow> {
        // Raising and matching cost several steps: a loop that raises is bounded in time too.
        self.steps += 8;
        self.step(pos)?;
        let raised = raised_type(&f);
        let unknown = |what: &str| -> R<Flow> {
            // Not skipped: if no clause catches it, Python's import fails here.
            limit(
                f.pos,
                format!(
                    "{}, raised in the `try` at line {}, column {}: {what}, so which `except` clause handles it is \
                     not modelled",
                    f.msg, pos.line, pos.col
                ),
            )
        };
        for h in handlers {
            if h.star {
                return unsup(h.pos, "`except*` (exception groups) is not modelled");
            }
            let matched = match &h.typ {
                None => true,
                Some(t) => {
                    let tv = self.eval(t, ctx)?;
                    let mut types = Vec::new();
                    let known = handler_types(&tv, 0, &mut types);
                    self.charge_work(t.pos, types.len(), "exception types matched")?;
                    if known.is_none() {
                        if let Value::Unavailable(u) = &tv {
                            return unsup(t.pos, unavailable_msg(u));
                        }
                        if not_exception_class(&tv, true) {
                            return Err(Fail {
                                kind: FailKind::Exception,
                                msg:
                                    "catching classes that do not inherit from BaseException is not allowed (TypeError)"
                                        .into(),
                                pos: t.pos,
                                exc_type: Some(Value::native("builtins.TypeError")),
                            });
                        }
                        return unknown(&format!(
                            "the clause at line {}, column {} names a {} that is not an exception class hasseflow \
                             models",
                            h.pos.line,
                            h.pos.col,
                            tv.type_name()
                        ));
                    }
                    match &raised {
                        Some(r) => types.iter().any(|t| catches(t, r)),
                        None if types.iter().any(|t| matches!(t, ExcClass::Builtin("BaseException"))) => true,
                        None => return unknown("the type of this exception is not known to hasseflow"),
                    }
                }
            };
            if !matched {
                continue;
            }
            if let Some(n) = &h.name {
                let bound = match &f.exc_type {
                    // What the text raised: the exception object itself (`e.args`, `str(e)`, `raise e`).
                    Some(v @ Value::Instance(_)) => v.clone(),
                    // The reader's own exceptions: their messages are not CPython's word for word.
                    _ => Value::Unavailable(Rc::new(Unavailable {
                        what: format!(
                            "`{n}`, the exception bound at line {}, column {}: an exception hasseflow raised itself \
                             (its message is not CPython's word for word), not modelled",
                            h.pos.line, h.pos.col
                        ),
                        aliases: Vec::new(),
                    })),
                };
                self.bind(n, bound, ctx);
            }
            self.handling.push(f);
            let r = self.exec_block(&h.body, ctx);
            self.handling.pop();
            if let Some(n) = &h.name {
                // Python unbinds the name when the clause ends.
                match &ctx.frame {
                    Some(fr) => {
                        fr.borrow_mut().vars.remove(n);
                    }
                    None => {
                        ctx.globals.borrow_mut().vars.remove(n);
                    }
                }
            }
            return r;
        }
        Err(f)
    }

    /// What `raise e` raises (`raise` alone: the exception being handled).
    pub(super) fn raise(&mut self, e: Option<&Expr>, ctx: &Ctx, pos: Pos) -> R<Fail> {
        let fail = |msg: String, t: Value| Fail { kind: FailKind::Exception, msg, pos, exc_type: Some(t) };
        let Some(e) = e else {
            return Ok(match self.handling.last() {
                Some(f) => f.clone(),
                None => {
                    fail("No active exception to reraise (RuntimeError)".into(), Value::native("builtins.RuntimeError"))
                }
            });
        };
        self.steps += 8;
        let v = self.eval(e, ctx)?;
        // `raise E` raises `E()`, as CPython instantiates a class it is given.
        let v = match v {
            Value::Native(n) if n.recv.is_none() && exception_parent(&n.name).is_some() => {
                super::types::builtin_exception(n.name.trim_start_matches("builtins."), Vec::new())
            }
            Value::Class(c) if c.native.as_deref().and_then(exception_parent).is_some() => {
                self.call(&Value::Class(c), Vec::new(), Vec::new(), pos)?
            }
            v => v,
        };
        let (class, args, name): (Value, Option<Value>, Rc<str>) = match &v {
            Value::Instance(i) if i.class.native.as_deref().and_then(exception_parent).is_some() => {
                (v.clone(), i.attr("args"), i.class.name.clone())
            }
            Value::Unavailable(u) => return unsup(pos, unavailable_msg(u)),
            other => {
                return Ok(fail(
                    format!("exceptions must derive from BaseException, not a {} (TypeError)", other.type_name()),
                    Value::native("builtins.TypeError"),
                ));
            }
        };
        // The message is kept short: a loop may raise a long one many times.
        let detail = match args {
            Some(Value::Tuple(a)) => match a.first() {
                Some(Value::Str(s)) if s.len() > 200 => format!(": {}...", s.chars().take(200).collect::<String>()),
                Some(Value::Str(s)) => format!(": {s}"),
                _ => String::new(),
            },
            _ => String::new(),
        };
        Ok(fail(format!("the text raises {name}{detail}"), class))
    }
}
