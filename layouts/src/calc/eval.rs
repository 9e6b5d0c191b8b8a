//! The evaluator: an expression tree to a layout, calling the algebra's free functions.

use super::CalcError;
use super::parse::{Expr, Parser};
use crate::error::LayoutError;
use crate::layout::Layout;
use crate::shape::IntTuple;
use crate::tiler::Tiler;
use crate::{
    blocked_product, coalesce, coalesce_by_mode, complement, composition_tiler, filter,
    flat_divide, left_inverse, logical_divide, logical_product, make_ordered_layout, raked_product,
    right_inverse, tiled_divide, tiled_product, zipped_divide, zipped_product,
};

/// The functions the calculator knows, as `name(arguments)`.
pub const FUNCTIONS: &[&str] = &[
    "coalesce(L[, profile])",
    "filter(L)",
    "composition(A, B|<B0,...>|shape)",
    "complement(L[, N])",
    "logical_divide(A, B)",
    "zipped_divide(A, B)",
    "tiled_divide(A, B)",
    "flat_divide(A, B)",
    "logical_product(A, B)",
    "zipped_product(A, B)",
    "tiled_product(A, B)",
    "blocked_product(A, B)",
    "raked_product(A, B)",
    "right_inverse(L)",
    "left_inverse(L)",
    "make_layout(shape[, stride])",
    "make_ordered_layout(shape, order)",
];

/// A value during evaluation.
enum Value {
    Tuple(IntTuple),
    Layout(Layout),
    Tiler(Tiler),
}

/// Evaluates `text` to a layout.
///
/// A bare shape evaluates to its column-major layout. Every intermediate layout is checked
/// against the size limit, so nesting cannot overflow.
///
/// ```
/// use layouts::calc::evaluate;
/// let l = evaluate("composition((6,2):(8,2), (4,3):(3,1))").unwrap();
/// assert_eq!(l.to_string(), "((2,2),3):((24,2),8)");
/// assert!(evaluate("complement((2,2):(1,1), 8)").is_err());
/// ```
pub fn evaluate(text: &str) -> Result<Layout, CalcError> {
    let expr = Parser::new(text).parse_all()?;
    match eval(&expr)? {
        Value::Layout(l) => Ok(l),
        Value::Tuple(t) => to_layout(Value::Tuple(t), "notation"),
        Value::Tiler(_) => Err(CalcError::BadArgument {
            func: "notation",
            message: "a tiler `<...>` is an argument, not a result".into(),
        }),
    }
}

fn eval(expr: &Expr) -> Result<Value, CalcError> {
    match expr {
        Expr::Tuple(t) => Ok(Value::Tuple(t.clone())),
        Expr::Layout(s, d, _) => Layout::new(s.clone(), d.clone())
            .map(Value::Layout)
            .map_err(|source| CalcError::Layout {
                func: "notation",
                source,
            }),
        Expr::Tiler(items) => {
            let tilers = items
                .iter()
                .map(|e| eval(e).and_then(|v| to_tiler(v, "tiler")))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Value::Tiler(Tiler::Modes(tilers)))
        }
        Expr::Call(name, args, _) => call(name, args),
    }
}

fn call(name: &str, args: &[Expr]) -> Result<Value, CalcError> {
    let Some(&full) = FUNCTIONS.iter().find(|f| f.split('(').next() == Some(name)) else {
        return Err(CalcError::UnknownFunction(name.to_string()));
    };
    let func: &'static str = full.split('(').next().unwrap_or(full);
    let mut values = args
        .iter()
        .map(eval)
        .collect::<Result<Vec<_>, _>>()?
        .into_iter();
    let (min, max) = arity(func);
    if args.len() < min || args.len() > max {
        return Err(CalcError::BadArgument {
            func,
            message: format!(
                "takes {} argument(s): {full}",
                if min == max {
                    min.to_string()
                } else {
                    format!("{min} or {max}")
                }
            ),
        });
    }
    let mut next = || {
        values.next().ok_or(CalcError::BadArgument {
            func,
            message: "missing argument".into(),
        })
    };
    let wrap = |r: Result<Layout, LayoutError>| -> Result<Value, CalcError> {
        let l = r.map_err(|source| CalcError::Layout { func, source })?;
        l.check_bounds()
            .map_err(|source| CalcError::Layout { func, source })?;
        Ok(Value::Layout(l))
    };
    match func {
        "coalesce" => {
            let l = to_layout(next()?, func)?;
            match values_left(&mut next) {
                Some(v) => wrap(coalesce_by_mode(&l, &to_tuple(v, func)?)),
                None => wrap(Ok(coalesce(&l))),
            }
        }
        "filter" => wrap(Ok(filter(&to_layout(next()?, func)?))),
        "composition" => {
            let a = to_layout(next()?, func)?;
            wrap(composition_tiler(&a, &to_tiler(next()?, func)?))
        }
        "complement" => {
            let l = to_layout(next()?, func)?;
            let n = match values_left(&mut next) {
                Some(v) => to_tuple(v, func)?.product(),
                None => l.cosize(),
            };
            wrap(complement(&l, n))
        }
        "logical_divide" | "zipped_divide" | "tiled_divide" | "flat_divide" | "logical_product"
        | "zipped_product" | "tiled_product" => {
            let a = to_layout(next()?, func)?;
            let t = to_tiler(next()?, func)?;
            wrap(match func {
                "logical_divide" => logical_divide(&a, &t),
                "zipped_divide" => zipped_divide(&a, &t),
                "tiled_divide" => tiled_divide(&a, &t),
                "flat_divide" => flat_divide(&a, &t),
                "logical_product" => logical_product(&a, &t),
                "zipped_product" => zipped_product(&a, &t),
                _ => tiled_product(&a, &t),
            })
        }
        "blocked_product" | "raked_product" => {
            let a = to_layout(next()?, func)?;
            let b = to_layout(next()?, func)?;
            wrap(if func == "blocked_product" {
                blocked_product(&a, &b)
            } else {
                raked_product(&a, &b)
            })
        }
        "right_inverse" => wrap(right_inverse(&to_layout(next()?, func)?)),
        "left_inverse" => wrap(left_inverse(&to_layout(next()?, func)?)),
        "make_layout" => {
            let shape = to_tuple(next()?, func)?;
            match values_left(&mut next) {
                Some(v) => wrap(Layout::new(shape, to_tuple(v, func)?)),
                None => wrap(Layout::column_major(shape)),
            }
        }
        _ => {
            let shape = to_tuple(next()?, func)?;
            wrap(make_ordered_layout(&shape, &to_tuple(next()?, func)?))
        }
    }
}

/// The optional next argument.
fn values_left(next: &mut impl FnMut() -> Result<Value, CalcError>) -> Option<Value> {
    next().ok()
}

/// (minimum, maximum) argument count.
fn arity(func: &str) -> (usize, usize) {
    match func {
        "filter" | "right_inverse" | "left_inverse" => (1, 1),
        "coalesce" | "complement" | "make_layout" => (1, 2),
        _ => (2, 2),
    }
}

fn to_layout(v: Value, func: &'static str) -> Result<Layout, CalcError> {
    match v {
        Value::Layout(l) => Ok(l),
        Value::Tuple(t) => {
            Layout::column_major(t).map_err(|source| CalcError::Layout { func, source })
        }
        Value::Tiler(t) => Err(CalcError::BadArgument {
            func,
            message: format!("expected a layout, found the tiler {t}"),
        }),
    }
}

fn to_tiler(v: Value, _func: &'static str) -> Result<Tiler, CalcError> {
    Ok(match v {
        Value::Layout(l) => Tiler::Layout(l),
        Value::Tuple(t) => Tiler::from_shape(&t),
        Value::Tiler(t) => t,
    })
}

fn to_tuple(v: Value, func: &'static str) -> Result<IntTuple, CalcError> {
    match v {
        Value::Tuple(t) => Ok(t),
        Value::Layout(l) => Err(CalcError::BadArgument {
            func,
            message: format!("expected a shape or an integer, found the layout {l}"),
        }),
        Value::Tiler(t) => Err(CalcError::BadArgument {
            func,
            message: format!("expected a shape or an integer, found the tiler {t}"),
        }),
    }
}
