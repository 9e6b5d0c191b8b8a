//! `TileLayout`: shard iterators per dimension, replica iterators and an offset.

use std::collections::BTreeMap;

use super::{Axis, TileError};

/// One iterator: `extent` steps of `stride` along `axis`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Iter {
    /// The number of steps.
    pub extent: i64,
    /// The step on `axis`.
    pub stride: i64,
    /// The axis stepped.
    pub axis: Axis,
}

impl Iter {
    /// `extent` steps of `stride` on `axis`.
    pub const fn new(extent: i64, stride: i64, axis: Axis) -> Iter {
        Iter {
            extent,
            stride,
            axis,
        }
    }

    /// `extent` steps of `stride` on the memory axis `m`.
    pub const fn m(extent: i64, stride: i64) -> Iter {
        Iter {
            extent,
            stride,
            axis: Axis::M,
        }
    }
}

/// A value on every axis the layout touches (axes not present are 0).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Point(BTreeMap<Axis, i64>);

impl Point {
    /// The value on `axis` (0 when the layout does not touch it).
    pub fn get(&self, axis: Axis) -> i64 {
        self.0.get(&axis).copied().unwrap_or(0)
    }

    /// The axes with their values.
    pub fn iter(&self) -> impl Iterator<Item = (Axis, i64)> + '_ {
        self.0.iter().map(|(a, v)| (*a, *v))
    }

    /// Adds `v` on `axis`; zero values are not stored, so equal points compare equal.
    fn add(&mut self, axis: Axis, v: i64) {
        let e = self.0.entry(axis).or_insert(0);
        *e += v;
        if *e == 0 {
            self.0.remove(&axis);
        }
    }
}

/// A tile layout: `S[shard] + R[replica] + offset`.
///
/// The shard has one group of iterators per tile dimension; the dimension's extent is the
/// product of its iterators' extents and its coordinate splits over them row-major.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TileLayout {
    pub(super) dims: Vec<Vec<Iter>>,
    pub(super) replica: Vec<Iter>,
    pub(super) offset: BTreeMap<Axis, i64>,
}

impl TileLayout {
    /// A layout from its shard (one group of iterators per dimension), replica and offset.
    ///
    /// Errors when there is no dimension, a dimension has no iterator, or an extent is below 1.
    pub fn new(
        dims: Vec<Vec<Iter>>,
        replica: Vec<Iter>,
        offset: impl IntoIterator<Item = (Axis, i64)>,
    ) -> Result<TileLayout, TileError> {
        if dims.is_empty() || dims.iter().any(Vec::is_empty) {
            return Err(TileError::Malformed(
                "every dimension needs an iterator".into(),
            ));
        }
        if dims
            .iter()
            .flatten()
            .chain(&replica)
            .any(|it| it.extent < 1)
        {
            return Err(TileError::Malformed("extents must be at least 1".into()));
        }
        // Bounded like CuTe layouts (`crate::LIMIT`), so apply and span cannot overflow.
        let limit = i128::from(crate::LIMIT);
        let size: i128 = dims
            .iter()
            .flatten()
            .chain(&replica)
            .map(|i| i128::from(i.extent))
            .fold(1, i128::saturating_mul);
        let far = dims
            .iter()
            .flatten()
            .chain(&replica)
            .any(|i| i128::from(i.stride).abs() >= limit);
        let span: i128 = dims
            .iter()
            .flatten()
            .chain(&replica)
            .map(|i| i128::from(i.extent - 1) * i128::from(i.stride).abs())
            .fold(0, i128::saturating_add);
        if size >= limit || far || span >= limit {
            return Err(TileError::Malformed(
                "extents and strides must keep sizes and spans below 2^31".into(),
            ));
        }
        let mut off = BTreeMap::new();
        for (a, v) in offset {
            if i128::from(v).abs() >= limit {
                return Err(TileError::Malformed(format!(
                    "offset {v}@{a} is beyond 2^31"
                )));
            }
            *off.entry(a).or_insert(0) += v;
        }
        off.retain(|_, v| *v != 0);
        Ok(TileLayout {
            dims,
            replica,
            offset: off,
        })
    }

    /// A shard with one iterator per dimension.
    pub fn shard(iters: Vec<Iter>) -> Result<TileLayout, TileError> {
        TileLayout::new(iters.into_iter().map(|i| vec![i]).collect(), Vec::new(), [])
    }

    /// The iterators of each dimension.
    pub fn dims(&self) -> &[Vec<Iter>] {
        &self.dims
    }

    /// The replica iterators.
    pub fn replica(&self) -> &[Iter] {
        &self.replica
    }

    /// The offset on each axis (zero offsets are not stored).
    pub fn offset(&self) -> impl Iterator<Item = (Axis, i64)> + '_ {
        self.offset.iter().map(|(a, v)| (*a, *v))
    }

    /// The tile shape: the extent of each dimension.
    pub fn shape(&self) -> Vec<i64> {
        self.dims
            .iter()
            .map(|d| d.iter().map(|i| i.extent).product())
            .collect()
    }

    /// The number of elements of the tile.
    pub fn size(&self) -> i64 {
        self.shape().iter().product()
    }

    /// Every axis the layout touches, in axis order.
    pub fn axes(&self) -> Vec<Axis> {
        let mut axes: Vec<Axis> = self
            .dims
            .iter()
            .flatten()
            .chain(&self.replica)
            .map(|i| i.axis)
            .chain(self.offset.keys().copied())
            .collect();
        axes.sort();
        axes.dedup();
        axes
    }

    /// The per-axis values of the element at `coord` (one index per dimension): one point, or
    /// one point per replica when the layout is replicated (sorted, without repeats).
    pub fn apply(&self, coord: &[i64]) -> Result<Vec<Point>, TileError> {
        let shape = self.shape();
        if coord.len() != shape.len() || coord.iter().zip(&shape).any(|(c, s)| *c < 0 || c >= s) {
            return Err(TileError::BadCoordinate {
                coord: coord.to_vec(),
                shape,
            });
        }
        let mut base = Point::default();
        for (a, v) in &self.offset {
            base.add(*a, *v);
        }
        for (dim, &c) in self.dims.iter().zip(coord) {
            let mut rest = c;
            for it in dim.iter().rev() {
                base.add(it.axis, (rest % it.extent) * it.stride);
                rest /= it.extent;
            }
        }
        let mut points = vec![base];
        for it in &self.replica {
            points = points
                .into_iter()
                .flat_map(|p| {
                    (0..it.extent).map(move |k| {
                        let mut q = p.clone();
                        q.add(it.axis, k * it.stride);
                        q
                    })
                })
                .collect();
        }
        points.sort();
        points.dedup();
        Ok(points)
    }

    /// The number of distinct values `axis` can take from 0: `1 + sum (extent - 1) * |stride|`
    /// over the shard and replica iterators on `axis` (the offset is not included).
    pub fn span(&self, axis: Axis) -> i64 {
        1 + self
            .dims
            .iter()
            .flatten()
            .chain(&self.replica)
            .filter(|i| i.axis == axis)
            .map(|i| (i.extent - 1) * i.stride.abs())
            .sum::<i64>()
    }

    /// The per-thread storage: the layout with every thread axis dropped (shard and replica
    /// iterators and offsets on thread axes). Dimensions left without iterators disappear; a
    /// layout left with none is `S[1:0]`.
    pub fn storage(&self) -> TileLayout {
        let mut dims: Vec<Vec<Iter>> = self
            .dims
            .iter()
            .map(|d| {
                d.iter()
                    .copied()
                    .filter(|i| !i.axis.is_thread())
                    .collect::<Vec<_>>()
            })
            .filter(|d| !d.is_empty())
            .collect();
        if dims.is_empty() {
            dims.push(vec![Iter::m(1, 0)]);
        }
        TileLayout {
            dims,
            replica: self
                .replica
                .iter()
                .copied()
                .filter(|i| !i.axis.is_thread())
                .collect(),
            offset: self
                .offset
                .iter()
                .filter(|(a, _)| !a.is_thread())
                .map(|(a, v)| (*a, *v))
                .collect(),
        }
    }

    /// The canonical form: extent-1 iterators dropped, adjacent iterators of one dimension on
    /// the same axis merged where the outer stride is the inner extent times the inner stride,
    /// replicas sorted. Two layouts with the same canonical form are the same function.
    pub fn canonicalize(&self) -> TileLayout {
        let dims = self
            .dims
            .iter()
            .map(|d| {
                let mut out: Vec<Iter> = Vec::new();
                // Walk inner (fastest) to outer so each iterator can merge into the one inside it.
                for it in d.iter().rev().filter(|i| i.extent > 1) {
                    match out.last_mut() {
                        Some(inner)
                            if inner.axis == it.axis
                                && it.stride == inner.extent * inner.stride =>
                        {
                            inner.extent *= it.extent;
                        }
                        _ => out.push(*it),
                    }
                }
                out.reverse();
                if out.is_empty() {
                    out.push(Iter::m(1, 0));
                }
                out
            })
            .collect();
        let mut replica: Vec<Iter> = self
            .replica
            .iter()
            .copied()
            .filter(|i| i.extent > 1)
            .collect();
        replica.sort_by_key(|i| (i.axis, i.stride, i.extent));
        TileLayout {
            dims,
            replica,
            offset: self.offset.clone(),
        }
    }
}
