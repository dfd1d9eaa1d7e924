// SPDX-License-Identifier: MIT
// reclaim: safe memory reclamation for C++. The umbrella header: every scheme and container.
#pragma once
#include "concepts.hpp"
#include "concurrent_ptr.hpp"
#include "core/marked_ptr.hpp"
#include "core/stats.hpp"
#include "ds/abtree.hpp"
#include "ds/cuckoo_map.hpp"
#include "ds/dgt_bst.hpp"
#include "ds/guarded_hm_hashmap.hpp"
#include "ds/guarded_hm_list.hpp"
#include "ds/guarded_ms_queue.hpp"
#include "ds/harris_list.hpp"
#include "ds/hm_hashmap.hpp"
#include "ds/hm_hashmap_restart.hpp"
#include "ds/hm_list.hpp"
#include "ds/hm_list_restart.hpp"
#include "ds/lazy_list.hpp"
#include "ds/lazy_skiplist.hpp"
#include "ds/ms_queue.hpp"
#include "ds/nm_bst.hpp"
#include "ds/occ_avl.hpp"
#include "ds/treiber_stack.hpp"
#include "free/amortized.hpp"
#include "free/batch.hpp"
#include "policies.hpp"
#include "read_phase.hpp"
#include "schemes/debra.hpp"
#include "schemes/ebr.hpp"
#include "schemes/epoch_pop.hpp"
#include "schemes/hazard_pop.hpp"
#include "schemes/hp.hpp"
#include "schemes/hp_asym.hpp"
#include "schemes/ibr.hpp"
#if defined(__x86_64__) || defined(__i386__)
#include "schemes/hp_mprotect.hpp"  // x86 only
#include "schemes/hp_splitcas.hpp"  // x86 only
#endif
#include "schemes/lfrc.hpp"
#include "schemes/nbr.hpp"
#include "schemes/ner.hpp"
#include "schemes/none.hpp"
#include "schemes/qsbr.hpp"
#include "schemes/rcu.hpp"
#include "schemes/sized_for.hpp"
#include "schemes/stamp_it.hpp"
#include "schemes/token_ebr.hpp"
#if defined(__x86_64__) || defined(__aarch64__)
// The schemes built on a double-width compare-and-swap (core/platform/dwcas.hpp: x86-64 and
// AArch64; he shares wfe's header).
#include "schemes/crystalline.hpp"
#include "schemes/he.hpp"
#include "schemes/hyaline.hpp"
#include "schemes/wfe.hpp"
#endif
#include "std/hazard_pointer.hpp"
#include "std/rcu.hpp"
#include "version.hpp"
