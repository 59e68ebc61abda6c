"""Test configuration shared by every test module.

GPU runs (FUNCAD_BACKEND=gpu) share one card between pytest-xdist workers and
the JAX oracle: by default XLA's GPU client preallocates 75% of the card's
memory per process, so a second worker fails with CUDA_ERROR_OUT_OF_MEMORY.
Allocating on demand lets them share it. Set before any backend starts; an
explicit setting in the environment wins.
"""
import os
import re
import zlib

import pytest

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")


# The default run must stay under 10 minutes on 2 cores. These checks take seconds each
# and repeat what faster tests cover (other rows, other dtypes or modes of the same
# function), so they run with `-m slow` only. Keys are "file::test" or "file::test[id]";
# `*` matches any characters.
SLOW = [
    # the 4x32 impls' jit/vmap and sampler checks (philox2x32's stay, and so does every
    # impl's seeding and known-answer test); the loggamma sampler (gamma's stays); the
    # sharding notebook (tests/sharding/ covers its programs)
    "test_rng_impls.py::test_jit_and_vmap_match_jax[threefry4x32]",
    "test_rng_impls.py::test_jit_and_vmap_match_jax[philox4x32]",
    "test_rng_impls.py::test_samplers_match_jax[*-threefry4x32]",
    "test_rng_impls.py::test_samplers_match_jax[*-philox4x32]",
    "test_samplers.py::test_sampler_jit_and_vmap_match_jax[loggamma]",
    "test_notebooks.py::test_notebook_runs_in_a_fresh_kernel[07_sharding]",
    # the heaviest single sampler checks (each 3-5 s); the other samplers, dtypes and
    # impls of the same tests stay in the default run
    "test_random_prng.py::test_float_samplers_bit_exact[ball-float32]",
    "test_random_prng.py::test_float_samplers_bit_exact[dirichlet-float32]",
    "test_random_prng.py::test_float_samplers_bit_exact[gamma_array-float32]",
    "test_rng_bits.py::test_samplers_match_jax[rbg]",
    "test_rng_bits.py::test_non_partitionable_matches_jax[rbg]",
    # JAX's newer PRNG impls: the seeding of philox2x32 stays in the default run
    "test_rng_impls.py::test_seed_split_fold_in_bits_match_jax[threefry4x32]",
    "test_rng_impls.py::test_seed_split_fold_in_bits_match_jax[philox4x32]",
    "test_rng_impls.py::test_threefry_partitionable_and_x64_off_leave_them_alone",
    "test_example_libraries.py::test_stax_layer_options_match_jax",
    "test_example_libraries.py::test_stax_vmap_per_example_matches_a_loop",
    "test_conv.py::test_fftconvolve_matches_jax_with_axes_complex_and_jit",
    "test_conv.py::test_complex_convolutions_match_jax",
    "test_stats.py::test_gaussian_mixture_likelihood_grad_jit_vmap",
    "test_rng_bits.py::test_non_partitionable_matches_jax[threefry2x32]",
    "test_rng_bits.py::test_samplers_match_jax[unsafe_rbg]",
    "test_rng_bits.py::test_transforms_with_rbg_keys[unsafe_rbg]",
    "test_samplers.py::test_multinomial_matches_jax",
    "test_samplers.py::test_gamma_gradient_under_jit_vmap_and_edges",
    "test_samplers.py::test_sampler_bits_match_jax[*-float64*]",
    "test_doctests.py::test_docstring_examples[funcad.random._gamma]",
    # the heaviest docstring modules (3-7 s each; their public modules' examples stay)
    "test_doctests.py::test_docstring_examples[funcad.example_libraries._stax]",
    "test_doctests.py::test_docstring_examples[funcad.random._discrete]",
    "test_doctests.py::test_docstring_examples[funcad.nn.initializers]",
    "test_samplers.py::test_orthogonal_and_multivariate_normal_match_jax[float64]",
    "test_samplers.py::test_counting_moments",
    "test_random_prng.py::test_float_samplers_bit_exact[*-float64]",
    "test_scaled_dot.py::test_grad_with_bfloat16_output_matches_jax",
    "test_scaled_dot.py::test_dimension_numbers_match_jax[multi]",
    "test_scaled_dot.py::test_dimension_numbers_match_jax[middle]",
    "test_ad.py::test_matches_jax[lax_zeta_q]",
    "test_control_flow.py::test_ode_fori_loop_matches_jax",
    "test_x32.py::test_op_table_rows_in_float32_mode_sample",
    "test_x32.py::test_random_init",
    "test_robustness.py::test_eager_grad_loop_does_not_grow_memory",
    "test_robustness.py::test_jit_call_loop_does_not_grow_memory",
    "test_special_functions.py::test_derivative_conventions_match_jax",
    "test_linalg_schur.py::test_tridiagonal_solve_derivatives_match_jax",
    "test_initializers.py::test_variance_scaling_modes_axes_and_jit",
    # funcad.scipy.fft/interpolate/sparse.linalg: the other cases of these tests stay
    "test_fft.py::test_dct_dtypes_complex_roundtrip_and_derivatives",
    "test_fft.py::test_dctn_idctn_match_scipy_and_jax[*]",
    "test_sparse_linalg.py::test_krylov_solvers_match_numpy_and_jax_values_and_grads[gmres-incremental]",
    "test_interpolate.py::test_regular_grid_interpolator_matches_scipy_and_jax",
    # Slerp, and the rotation and spectral gradient checks (jit/vmap/value checks stay)
    "test_rotation.py::test_slerp_matches_jax",
    "test_rotation.py::test_grads_match_jax",
    "test_signal_spectral.py::test_grads_match_jax",
    # room for the new namespaces: the heaviest checks whose siblings stay (the float64
    # attention check, the nvfp4 scaled-dot checks, the default softmax mode, one seed of
    # each bit width of the rng_bit_generator emulation)
    "test_samplers.py::test_orthogonal_and_multivariate_normal_match_jax[float32]",
    "test_samplers.py::test_typed_keys_in_every_sampler",
    "test_nn.py::test_dot_product_attention_matches_jax[float32]",
    "test_nn.py::test_dot_product_attention_gradients_jit_vmap",
    "test_scaled_dot.py::test_values_match_jax[mxfp8-None-f32]",
    "test_scaled_dot.py::test_grad_matches_jax[mxfp8-None]",
    "test_softmax_custom_jvp.py::test_softmax_derivatives_match_jax_in_both_modes[True-True]",
    "test_softmax_custom_jvp.py::test_softmax_derivatives_match_jax_in_both_modes[True-False]",
    "test_softmax_custom_jvp.py::test_softmax_derivatives_match_jax_in_both_modes[False-True]",
    "test_rng_bits.py::test_numpy_algorithm_is_xlas[*-1]",
    "test_rng_bits.py::test_numpy_algorithm_is_xlas[*-2]",
    # the JAX-program corpus (tests/programs/): each program runs under JAX and under
    # funcad (seconds each); pytree_updates, x64_dtypes, implicit_fixed_point and
    # jvp_tricks stay in the default run
    "test_programs.py::test_program_prints_what_jax_prints[mlp_classifier]",
    "test_programs.py::test_program_prints_what_jax_prints[cnn_lax_conv]",
    "test_programs.py::test_program_prints_what_jax_prints[lstm_scan]",
    "test_programs.py::test_program_prints_what_jax_prints[attention_block]",
    "test_programs.py::test_program_prints_what_jax_prints[vae]",
    "test_programs.py::test_program_prints_what_jax_prints[gp_regression]",
    "test_programs.py::test_program_prints_what_jax_prints[bayes_logreg_hmc]",
    "test_programs.py::test_program_prints_what_jax_prints[langevin]",
    "test_programs.py::test_program_prints_what_jax_prints[neural_ode]",
    "test_programs.py::test_program_prints_what_jax_prints[pinn_poisson]",
    "test_programs.py::test_program_prints_what_jax_prints[realnvp_flow]",
    "test_programs.py::test_program_prints_what_jax_prints[gnn_segment_sum]",
    "test_programs.py::test_program_prints_what_jax_prints[kmeans]",
    "test_programs.py::test_program_prints_what_jax_prints[pca_svd]",
    "test_programs.py::test_program_prints_what_jax_prints[newton_hessian]",
    "test_programs.py::test_program_prints_what_jax_prints[bfgs_minimize]",
    "test_programs.py::test_program_prints_what_jax_prints[nbody_vmap]",
    "test_programs.py::test_program_prints_what_jax_prints[monte_carlo_option]",
    "test_programs.py::test_program_prints_what_jax_prints[maml]",
    "test_programs.py::test_program_prints_what_jax_prints[per_example_grads]",
    "test_programs.py::test_program_prints_what_jax_prints[cg_solve]",
    "test_programs.py::test_program_prints_what_jax_prints[image_resize]",
    "test_programs.py::test_program_prints_what_jax_prints[fft_filter]",
    "test_programs.py::test_program_prints_what_jax_prints[random_tour]",
    "test_programs.py::test_program_prints_what_jax_prints[custom_rules]",
    "test_programs.py::test_program_prints_what_jax_prints[stax_mlp_momentum]",
    # key reuse: the environment-variable subprocess and the slowest program pair
    "test_key_reuse.py::test_environment_variable",
    "test_key_reuse.py::test_same_as_jax[eager_gamma_twice]",
    # experimental.sparse: the comparisons of JAX's buffer layouts (the same ops stay
    # checked against dense NumPy)
    "test_bcoo.py::test_dot_general_sparse_sparse_vs_jax",
    "test_bcoo.py::test_structural_layouts_vs_jax",
    "test_bcoo.py::test_empty_eye",
    "test_bcoo.py::test_sum_duplicates_batched",
    "test_bcoo.py::test_update_layout[src4-dst4]",
    "test_bcoo.py::test_fromdense_todense_layouts[2-0]",
    "test_bcoo.py::test_fromdense_todense_layouts[0-1]",
    "test_bcoo.py::test_extract_and_dot_general_sampled",
    "test_bcoo.py::test_fromdense_padding_and_index_dtype",
    # room in the 10-minute budget (the suite reached 11.5 minutes): the heaviest
    # checks whose siblings stay (other dtypes, distributions, modes, transforms)
    "test_leak_checking.py::test_jax_reports_the_same_leaks",
    "test_leak_checking.py::test_a_leak_into_an_object_attribute_and_a_closure",
    "test_leak_checking.py::test_a_leak_is_reported_naming_the_trace_and_its_holder[vmap]",
    "test_leak_checking.py::test_a_leak_is_reported_naming_the_trace_and_its_holder[hessian]",
    "test_leak_checking.py::test_a_leak_is_reported_naming_the_trace_and_its_holder[jacrev]",
    "test_rotation.py::test_conversions_match_jax[stack]",
    "test_nn.py::test_softmax_family_with_where_and_axes",
    "test_refs.py::test_program_matches_jax[transforms_of_internal_refs]",
    "test_stats.py::test_continuous_distributions_match_jax_with_loc_scale[beta]",
    "test_stats.py::test_continuous_distributions_match_jax_with_loc_scale[chi2]",
    "test_stats.py::test_continuous_distributions_match_jax_with_loc_scale[cauchy]",
    "test_lax_ops.py::test_custom_linear_solve_all_modes_match_jax",
    "test_ode.py::test_second_order_and_jacobian_wrt_times_match_jax",
    "test_samplers.py::test_sampler_jit_and_vmap_match_jax[binomial]",
    "test_samplers.py::test_sampler_jit_and_vmap_match_jax[poisson]",
    "test_samplers.py::test_sampler_jit_and_vmap_match_jax[t]",
    "test_scaled_dot.py::test_grad_matches_jax[mxfp4-None]",
    "test_scaled_dot.py::test_values_match_jax[mxfp8-None-bf16]",
    "test_scaled_dot.py::test_dimension_numbers_match_jax[matmul]",
    "test_random.py::test_uniform_normal_exact[0-float16]",
    "test_linalg_schur.py::test_polar_gradients_match_jax_svd_and_jit",
    "test_x32.py::test_softmax_logsumexp",
    "test_optimize.py::test_matches_jax_eager_and_jit[float64-1e-09]",
    "test_ops_segment.py::test_tied_extremes_share_the_gradient_as_in_jax[segment_max]",
    "test_notebooks.py::test_notebook_runs_in_a_fresh_kernel[03_jit_and_xla]",
    "test_notebooks.py::test_notebook_runs_in_a_fresh_kernel[05_training]",
    # polar, the slowest linear-algebra rows (2-12 s each): its square real row stays under
    # vmap-of-grad, its float64/complex128 properties and first-order complex checks stay
    "test_complex.py::test_complex_row_finite_differences_order2[c_scipy_linalg_polar]",
    "test_vmap.py::test_vmap_of_grad_and_grad_of_vmap[scipy_linalg_polar_tall]",
    "test_vmap.py::test_vmap_of_grad_and_grad_of_vmap[scipy_linalg_polar_wide_left]",
    "test_linalg_schur.py::test_polar_properties[*-float32]",
    "test_linalg_schur.py::test_polar_properties[*-complex64]",
]
# Op-table rows whose jit, order-2 and complex checks compile or differentiate large
# programs (matrix functions, hypergeometric series, truncated normals); their eager,
# vmap and order-1 checks stay in the default run.
HEAVY_ROWS = {"special2_exp1", "special2_expi", "special2_hyp1f1_x", "special2_hyp1f1_abx",
              "special_betaln_large", "c_linalg_lstsq", "c_scipy_linalg_funm", "special_comb", "c_linalg_det",
              "regular_grid_interpolator", "lax_conv_general_dilated_local", "lax_scatter_max_dn",
              "lax_cumlogsumexp", "c_linalg_qr_complete", "special2_expi_large", "c_linalg_svd_wide",
              "scipy_linalg_expm", "scipy_linalg_expm_large", "scipy_linalg_expm_frechet",
              "c_scipy_linalg_expm_frechet", "special2_hyp2f1_x", "special2_hyp2f1_abcx", "special2_expn",
              "special_beta", "scipy_linalg_polar", "scipy_linalg_polar_tall", "scipy_linalg_polar_wide_left",
              "linalg_qdwh", "stats_truncnorm_sf", "stats_truncnorm_logsf", "stats_truncnorm_cdf",
              "stats_truncnorm_logcdf", "stats_betabinom_logpmf", "stats_beta_logpdf", "special_zeta",
              "special_betaln", "c_scipy_linalg_expm", "c_linalg_poly_of_matrix", "c_linalg_eig_vectors",
              "c_linalg_eig_vectors_complex", "linalg_lstsq", "polyfit_weighted_2d", "lax_scatter_min_dn",
              "scipy_linalg_lu_solve_t", "linalg_cholesky_update"}
HEAVY_CHECKS = {"test_op_table_under_jit_matches_eager", "test_check_grads_order2",
                "test_complex_row_matches_jax", "test_complex_row_finite_differences_order2",
                "test_vmap_matches_jax", "test_vmap_of_grad_and_grad_of_vmap",
                "test_op_table_grad_jaxpr_optimised_is_bitwise_equal"}
# scipy.stats' distributions are compositions of the special functions that the
# special_* rows check under jit and vmap; their heavy checks run with -m slow too.
HEAVY_PREFIXES = ("stats_",)
# The op table's costliest whole-table checks (an XLA compile or a JAX oracle per row)
# run in the default run for a fixed third of the rows (by a hash of the name), and for
# all of them with -m slow, which `make test-tables` (part of CI's .ci/run) runs. Every
# row's eager value, jaxpr, vmap against a loop and derivatives stay in the default run.
# FUNCAD_FULL_TABLES=1 keeps every row of them in the run (make test-oldest sets it).
_FULL_TABLES = os.environ.get("FUNCAD_FULL_TABLES", "") not in ("", "0")
SAMPLED_CHECKS = {"test_vmap_matches_jax", "test_op_table_under_jit_matches_eager",
                  "test_vmap_of_grad_and_grad_of_vmap", "test_complex_row_matches_jax",
                  "test_op_table_grad_jaxpr_optimised_is_bitwise_equal"}


def _heavy(name: str, row: str | None) -> bool:
    if row is None or name not in HEAVY_CHECKS:
        return False
    if row in HEAVY_ROWS or row.startswith(HEAVY_PREFIXES):
        return True
    return name in SAMPLED_CHECKS and not _FULL_TABLES and zlib.crc32(row.encode()) % 3 != 0
_SLOW = re.compile("|".join(re.escape(k).replace(r"\*", ".*") for k in SLOW))


@pytest.hookimpl(tryfirst=True)  # before -m 'not slow' deselects
def pytest_collection_modifyitems(config, items):
    for item in items:
        name = getattr(item, "originalname", item.name)
        row = item.callspec.id.split("-")[0] if hasattr(item, "callspec") else None
        key = f"{os.path.basename(str(item.fspath))}::{item.name}"
        if _SLOW.fullmatch(key) or _SLOW.fullmatch(key.split("[")[0]) or _heavy(name, row):
            item.add_marker(pytest.mark.slow)
