// The flat-input reader: fills the core's input arrays straight from a snapshot's Python
// objects (ytsched/fairshare/flat.py's ``build_flat`` fast path).
//
// It reads only objects whose types it can prove are the package's own (exact ``PoolSpec``,
// ``OperationSpec``, ``IntegralGuarantees``, enum members by identity, exact ``float``/``int``/
// ``bool``/``str``/``tuple``/``list``/``dict``), with dataclass slots read through their member
// descriptors.  It applies every check of the Python builder; on anything it does not know or
// any check that fails it returns ``None`` and the Python builder runs instead, so errors stay
// exactly the Python builder's.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

namespace ytsched {

// Fill ``in_f`` (n x kInF) and ``in_i`` (n x kInI), every column of every row, and return
// ``(pool_names, operation_names, root_row)``.  ``None``: fall back to the Python builder.  ``kinds`` holds, in order: PoolSpec,
// OperationSpec, IntegralGuarantees, SchedulingMode.FIFO, SchedulingMode.FAIR_SHARE, the three
// IntegralGuaranteeType members (none, burst, relaxed) and the three FifoSortParameter members
// (weight, start_time, pending_job_count).
nanobind::object read_flat(nanobind::handle pools, nanobind::handle operations,
                           nanobind::handle total, bool gpu_only, int gpu_index, bool vanilla_gang,
                           nanobind::tuple kinds,
                           nanobind::ndarray<double, nanobind::ndim<2>, nanobind::c_contig,
                                             nanobind::device::cpu>
                               in_f,
                           nanobind::ndarray<int32_t, nanobind::ndim<2>, nanobind::c_contig,
                                             nanobind::device::cpu>
                               in_i);

}  // namespace ytsched
