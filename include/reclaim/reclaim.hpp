// reclaim: safe memory reclamation for C++. The umbrella header: every scheme and container.
#pragma once
#include "concepts.hpp"
#include "core/marked_ptr.hpp"
#include "core/stats.hpp"
#include "ds/hm_list.hpp"
#include "ds/lazy_list.hpp"
#include "free/batch.hpp"
#include "schemes/debra.hpp"
#include "schemes/hp.hpp"
#include "schemes/none.hpp"
