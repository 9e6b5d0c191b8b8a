//! A kernel's parameter list: what `KernelBuilder` produces and the launcher checks arguments
//! against. The order of [`KernelSignature::params`] is the order of the `.param` declarations of
//! the `.entry`.

use super::error::SignatureError;
use super::extent::{Extent, ExtentFacts, shape_text};
use super::tma::TmaBox;
use ptx_isa::ScalarType;

/// One kernel parameter.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Param {
    /// A device tensor, passed as a 64-bit global address (`.param .u64`).
    Tensor {
        /// Parameter name, for messages.
        name: String,
        /// Element type.
        dtype: ScalarType,
        /// Shape, outermost first (row-major).
        shape: Vec<Extent>,
        /// Required alignment of the base address, in bytes (a power of two; 1 for none).
        align: usize,
    },
    /// A scalar passed by value.
    Scalar {
        /// Parameter name.
        name: String,
        /// Its type.
        dtype: ScalarType,
    },
    /// The value of a symbolic extent, passed automatically: the launcher reads it from the shapes
    /// of the tensor arguments; the caller passes nothing for it.
    SymbolicExtent {
        /// The symbol, as written in the tensors' shapes.
        name: String,
        /// The integer type the kernel declares for it (`u32`, `u64`, `i32` or `i64`).
        dtype: ScalarType,
        /// What the kernel was built assuming of its value; the launcher refuses a value that
        /// breaks it.
        facts: ExtentFacts,
    },
    /// A symbolic extent the caller passes as a `u32` scalar argument (a length no tensor's
    /// shape carries, such as the longest sequence of a packed batch): the launcher checks it
    /// against `facts` and uses it wherever the symbol appears (launch extents, shapes).
    ExtentScalar {
        /// The symbol.
        name: String,
        /// What the kernel was built assuming of its value.
        facts: ExtentFacts,
    },
    /// A TMA tensor map passed by value: `.param .align 64 .b8 name[128]`, encoded by the caller
    /// (the launcher cannot look inside it). [`Param::TmaTensor`] is the checked form.
    TensorMap {
        /// Parameter name.
        name: String,
    },
    /// A global tensor the kernel moves through TMA, passed as its tensor map
    /// (`.param .align 64 .b8 name[128]`, as [`Param::TensorMap`]). The caller passes the device
    /// tensor; the launcher checks its dtype, shape and device as for [`Param::Tensor`], builds
    /// the `CUtensorMap` from its address and shape with this box, checks the driver's rules and
    /// encodes it.
    TmaTensor {
        /// Parameter name.
        name: String,
        /// Element type.
        dtype: ScalarType,
        /// Shape, outermost first (row-major).
        shape: Vec<Extent>,
        /// The box, its traversal step and swizzle.
        tma: TmaBox,
    },
}

impl Param {
    /// A tensor parameter with no alignment requirement beyond its element size.
    pub fn tensor(name: impl Into<String>, dtype: ScalarType, shape: Vec<Extent>) -> Param {
        Param::Tensor {
            name: name.into(),
            dtype,
            shape,
            align: dtype.bytes() as usize,
        }
    }

    /// A tensor parameter whose base address must be `align`-byte aligned.
    pub fn tensor_aligned(
        name: impl Into<String>,
        dtype: ScalarType,
        shape: Vec<Extent>,
        align: usize,
    ) -> Param {
        Param::Tensor {
            name: name.into(),
            dtype,
            shape,
            align,
        }
    }

    /// A scalar parameter.
    pub fn scalar(name: impl Into<String>, dtype: ScalarType) -> Param {
        Param::Scalar {
            name: name.into(),
            dtype,
        }
    }

    /// A symbolic extent passed as a `u32`.
    pub fn extent_u32(name: impl Into<String>) -> Param {
        Param::SymbolicExtent {
            name: name.into(),
            dtype: ScalarType::U32,
            facts: ExtentFacts::NONE,
        }
    }

    /// A symbolic extent passed as a `u64`.
    pub fn extent_u64(name: impl Into<String>) -> Param {
        Param::SymbolicExtent {
            name: name.into(),
            dtype: ScalarType::U64,
            facts: ExtentFacts::NONE,
        }
    }

    /// A tensor-map parameter.
    pub fn tensor_map(name: impl Into<String>) -> Param {
        Param::TensorMap { name: name.into() }
    }

    /// A TMA tensor parameter: a `dtype` tensor of `shape` moved in boxes of `tma`.
    pub fn tma_tensor(
        name: impl Into<String>,
        dtype: ScalarType,
        shape: Vec<Extent>,
        tma: TmaBox,
    ) -> Param {
        Param::TmaTensor {
            name: name.into(),
            dtype,
            shape,
            tma,
        }
    }

    /// The shape of a tensor parameter (plain or TMA); `None` for the others.
    pub fn shape(&self) -> Option<&[Extent]> {
        match self {
            Param::Tensor { shape, .. } | Param::TmaTensor { shape, .. } => Some(shape),
            _ => None,
        }
    }

    /// The parameter's name.
    pub fn name(&self) -> &str {
        match self {
            Param::Tensor { name, .. }
            | Param::Scalar { name, .. }
            | Param::SymbolicExtent { name, .. }
            | Param::ExtentScalar { name, .. }
            | Param::TensorMap { name }
            | Param::TmaTensor { name, .. } => name,
        }
    }

    /// Whether the caller passes an argument for it (symbolic extents are filled in).
    pub fn takes_argument(&self) -> bool {
        !matches!(self, Param::SymbolicExtent { .. })
    }

    /// Size and alignment of the parameter in the `.param` space, in bytes (PTX ISA 5.1.6.1,
    /// "Kernel Function Parameters": a pointer is a `.u64`, a tensor map a 128-byte, 64-aligned
    /// `.b8` array).
    pub fn layout(&self) -> (usize, usize) {
        match self {
            Param::Tensor { .. } => (8, 8),
            Param::Scalar { dtype, .. } | Param::SymbolicExtent { dtype, .. } => {
                (dtype.bytes() as usize, dtype.bytes() as usize)
            }
            Param::ExtentScalar { .. } => (4, 4),
            Param::TensorMap { .. } | Param::TmaTensor { .. } => (128, 64),
        }
    }

    /// A short description: `tensor f32[n]`, `scalar f32`, `extent n: u32`, `tensor map`,
    /// `TMA tensor f32[m, 64], box [32, 32], swizzle 128B`.
    pub fn kind_text(&self) -> String {
        match self {
            Param::Tensor { dtype, shape, .. } => {
                format!("tensor {}{}", dtype.name(), shape_text(shape))
            }
            Param::Scalar { dtype, .. } => format!("scalar {}", dtype.name()),
            Param::SymbolicExtent { name, dtype, facts } if *facts == ExtentFacts::NONE => {
                format!("extent {name}: {}", dtype.name())
            }
            Param::SymbolicExtent { name, dtype, facts } => {
                format!("extent {name}: {} ({facts})", dtype.name())
            }
            Param::ExtentScalar { name, facts } if *facts == ExtentFacts::NONE => {
                format!("extent {name}: scalar u32")
            }
            Param::ExtentScalar { name, facts } => {
                format!("extent {name}: scalar u32 ({facts})")
            }
            Param::TensorMap { .. } => "tensor map".to_string(),
            Param::TmaTensor {
                dtype, shape, tma, ..
            } => format!("TMA tensor {}{}, {tma}", dtype.name(), shape_text(shape)),
        }
    }
}

/// An entry point's name and ordered parameter list.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KernelSignature {
    /// The `.entry` name.
    pub name: String,
    /// Parameters in declaration order.
    pub params: Vec<Param>,
}

impl KernelSignature {
    /// A signature.
    pub fn new(name: impl Into<String>, params: Vec<Param>) -> KernelSignature {
        KernelSignature {
            name: name.into(),
            params,
        }
    }

    /// The parameters' names, in declaration order.
    pub fn param_names(&self) -> Vec<&str> {
        self.params.iter().map(Param::name).collect()
    }

    /// The parameter named `name`, if the kernel has one.
    pub fn param(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|p| p.name() == name)
    }

    /// How many arguments a caller passes (every parameter but the symbolic extents).
    pub fn argument_count(&self) -> usize {
        self.params.iter().filter(|p| p.takes_argument()).count()
    }

    /// Checks the signature itself: parameter names are unique, tensor alignments are powers of
    /// two, a TMA tensor has rank 1 to 5 and a box (and element strides) of its rank, and every
    /// symbolic-extent parameter has an integer type and is named in some tensor parameter's
    /// shape (else no launch could supply it).
    pub fn validate(&self) -> Result<(), SignatureError> {
        let bad = |reason: String| SignatureError::Invalid {
            kernel: self.name.clone(),
            reason,
        };
        let mut names = std::collections::BTreeSet::new();
        for p in &self.params {
            if !names.insert(p.name()) {
                return Err(bad(format!("parameter `{}` appears twice", p.name())));
            }
            match p {
                Param::Tensor { name, align, .. } if !align.is_power_of_two() => {
                    return Err(bad(format!(
                        "tensor `{name}` has alignment {align}, not a power of two"
                    )));
                }
                Param::TmaTensor {
                    name, shape, tma, ..
                } => {
                    // CUDA Driver API 6.30, cuTensorMapEncodeTiled: "tensorRank must be non-zero
                    // and less than or equal to the maximum supported dimensionality of 5".
                    if !(1..=5).contains(&shape.len()) {
                        return Err(bad(format!(
                            "TMA tensor `{name}` has rank {}; a tensor map takes 1 to 5",
                            shape.len()
                        )));
                    }
                    if tma.shape.len() != shape.len() || tma.element_strides.len() != shape.len() {
                        return Err(bad(format!(
                            "TMA tensor `{name}` of rank {} has a {}-dimensional box and {} \
                             element strides",
                            shape.len(),
                            tma.shape.len(),
                            tma.element_strides.len()
                        )));
                    }
                }
                Param::SymbolicExtent { name, dtype, .. } => {
                    if !dtype.is_int() {
                        return Err(bad(format!(
                            "symbolic extent `{name}` has non-integer type {}",
                            dtype.name()
                        )));
                    }
                    let named = self.params.iter().any(|q| {
                        q.shape().is_some_and(|shape| {
                            shape
                                .iter()
                                .any(|e| matches!(e, Extent::Symbol(s) if s == name))
                        })
                    });
                    if !named {
                        return Err(SignatureError::UnboundSymbol {
                            symbol: name.clone(),
                        });
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validate_catches_broken_signatures() {
        let ok = KernelSignature::new(
            "k",
            vec![
                Param::tensor("a", ScalarType::F32, vec!["n".into(), 4.into()]),
                Param::extent_u64("n"),
            ],
        );
        ok.validate().unwrap();
        assert_eq!(ok.argument_count(), 1);

        // Each broken parameter list and what its error says.
        let float_extent = Param::SymbolicExtent {
            name: "n".into(),
            dtype: ScalarType::F32,
            facts: ExtentFacts::NONE,
        };
        let broken = [
            (
                vec![
                    Param::scalar("a", ScalarType::F32),
                    Param::scalar("a", ScalarType::S32),
                ],
                "appears twice",
            ),
            (
                vec![Param::tensor_aligned(
                    "a",
                    ScalarType::F32,
                    vec![4.into()],
                    12,
                )],
                "power of two",
            ),
            (
                vec![
                    Param::tensor("a", ScalarType::F32, vec!["n".into()]),
                    float_extent,
                ],
                "non-integer",
            ),
        ];
        for (params, want) in broken {
            let e = KernelSignature::new("k", params).validate().unwrap_err();
            assert!(e.to_string().contains(want), "want `{want}`: {e}");
        }

        let unbound = KernelSignature::new(
            "k",
            vec![
                Param::tensor("a", ScalarType::F32, vec!["n".into()]),
                Param::extent_u32("m"),
            ],
        );
        assert!(matches!(
            unbound.validate(),
            Err(SignatureError::UnboundSymbol { .. })
        ));
    }

    #[test]
    fn tma_tensors_bind_symbols_and_need_a_box_of_their_rank() {
        use smem::SwizzleMode;
        let tma = TmaBox::new([32, 32]).swizzle(SwizzleMode::B128);
        let ok = KernelSignature::new(
            "k",
            vec![
                Param::extent_u32("rows"),
                Param::tma_tensor(
                    "src",
                    ScalarType::F32,
                    vec!["rows".into(), 64.into()],
                    tma.clone(),
                ),
            ],
        );
        ok.validate().unwrap();
        assert_eq!(ok.argument_count(), 1);
        assert_eq!(ok.params[1].layout(), (128, 64));
        assert_eq!(
            ok.params[1].kind_text(),
            "TMA tensor f32[rows, 64], box [32, 32], swizzle 128B"
        );
        // A TMA tensor of each shape with each box, and what its error says.
        let broken = [
            (
                vec![64.into()],
                tma.clone(),
                "rank 1 has a 2-dimensional box",
            ),
            (vec![2.into(); 6], TmaBox::new([1; 6]), "rank 6"),
            (
                vec![64.into(); 2],
                tma.element_strides([1]),
                "1 element strides",
            ),
        ];
        for (shape, tma_box, want) in broken {
            let param = Param::tma_tensor("src", ScalarType::F32, shape, tma_box);
            let e = KernelSignature::new("k", vec![param])
                .validate()
                .unwrap_err();
            assert!(e.to_string().contains(want), "want `{want}`: {e}");
        }
    }

    #[test]
    fn texts() {
        let p = Param::tensor("a", ScalarType::Bf16, vec!["m".into(), 64.into()]);
        assert_eq!(p.kind_text(), "tensor bf16[m, 64]");
        assert_eq!(p.layout(), (8, 8));
        assert_eq!(Param::tensor_map("t").layout(), (128, 64));
        assert_eq!(Param::extent_u32("n").kind_text(), "extent n: u32");
        assert!(!Param::extent_u32("n").takes_argument());
    }
}
