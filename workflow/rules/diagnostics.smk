rule memory_ledger:
    """Where one arm's RssAnon goes, per process, in a fresh process that loads the model once."""
    input:
        build=get_arm_build_json,
        envs=get_arm_environments,
        ready=get_environments_ready,
    output:
        f"{RESULTS}/raw/memory/{{engine}}/{{label}}.parquet",
    log:
        f"{RESULTS}/logs/memory/{{engine}}/{{label}}.log",
    conda:
        ENV_FILE
    # A process's RssAnon is its own, whatever runs beside it (the engine's thread count comes from
    # the arm, not from here): ledgers of different arms may run at once.
    threads: 1
    params:
        code=code_digest("memory_ledger.py"),
        config=job_config("memory_ledger.py"),
    script:
        "../scripts/memory_ledger.py"


rule memory_ledger_table:
    input:
        get_memory_ledgers,
    output:
        report(
            f"{RESULTS}/tables/memory_ledger.parquet",
            caption="../report/memory_ledger.rst",
            category="Tables",
        ),
    log:
        f"{RESULTS}/logs/tables/memory_ledger.log",
    conda:
        ENV_FILE
    params:
        code=code_digest("concat_parquet.py"),
        config=job_config("concat_parquet.py"),
    script:
        "../scripts/concat_parquet.py"


rule imports:
    """`python -X importtime` per entry point a rep pays, each in a fresh interpreter."""
    output:
        report(
            f"{RESULTS}/tables/imports.parquet",
            caption="../report/imports.rst",
            category="Tables",
        ),
    log:
        f"{RESULTS}/logs/tables/imports.log",
    conda:
        ENV_FILE
    threads: MACHINE_CORES
    resources:
        bench_slot=1,
    params:
        imports=config["diagnostics"]["imports"],
        code=code_digest("import_profile.py"),
        config=job_config("import_profile.py"),
    script:
        "../scripts/import_profile.py"


rule import_summary:
    input:
        imports=f"{RESULTS}/tables/imports.parquet",
        bench=f"{RESULTS}/tables/bench.parquet",
    output:
        f"{RESULTS}/tables/import_summary.parquet",
    log:
        f"{RESULTS}/logs/tables/import_summary.log",
    conda:
        ENV_FILE
    params:
        code=code_digest("import_summary.py"),
        config=job_config("import_summary.py"),
    script:
        "../scripts/import_summary.py"


rule kernels:
    """Ceilings (STREAM, bf16 matmul), then every kernel at this model's GEMM shapes."""
    input:
        build_json("reference"),
    output:
        report(
            f"{RESULTS}/tables/kernels.parquet",
            caption="../report/kernels.rst",
            category="Tables",
        ),
    log:
        f"{RESULTS}/logs/tables/kernels.log",
    conda:
        ENV_FILE
    threads: MACHINE_CORES
    resources:
        bench_slot=1,
    params:
        kernels=config["diagnostics"]["kernels"],
        code=code_digest("kernel_study.py"),
        config=job_config("kernel_study.py"),
    script:
        "../scripts/kernel_study.py"


rule decode_attribution:
    """One decode step's GEMM time (sum over layers, batch 1) against the arm's measured step."""
    input:
        kernels=f"{RESULTS}/tables/kernels.parquet",
        bench=f"{RESULTS}/tables/warm.parquet",
        model=build_json("reference"),
    output:
        f"{RESULTS}/tables/decode_attribution.parquet",
    log:
        f"{RESULTS}/logs/tables/decode_attribution.log",
    conda:
        ENV_FILE
    params:
        code=code_digest("decode_attribution.py"),
        config=job_config("decode_attribution.py"),
    script:
        "../scripts/decode_attribution.py"


rule decode_profile:
    """One arm's decode step, every op's own time grouped into parts, in a fresh process."""
    input:
        build=get_arm_build_json,
    output:
        f"{RESULTS}/raw/profile/{{engine}}/{{label}}.parquet",
    log:
        f"{RESULTS}/logs/profile/{{engine}}/{{label}}.log",
    conda:
        ENV_FILE
    threads: MACHINE_CORES
    resources:
        bench_slot=1,
    params:
        code=code_digest("decode_profile.py"),
        config=job_config("decode_profile.py"),
    script:
        "../scripts/decode_profile.py"


rule decode_profile_table:
    input:
        get_decode_profiles,
    output:
        report(
            f"{RESULTS}/tables/decode_profile.parquet",
            caption="../report/decode_profile.rst",
            category="Tables",
        ),
    log:
        f"{RESULTS}/logs/tables/decode_profile.log",
    conda:
        ENV_FILE
    params:
        code=code_digest("concat_parquet.py"),
        config=job_config("concat_parquet.py"),
    script:
        "../scripts/concat_parquet.py"


rule omp_regions:
    """The cost of one OpenMP parallel region per thread count and wait policy, priced per decode step."""
    input:
        profile=f"{RESULTS}/tables/decode_profile.parquet",
    output:
        report(
            f"{RESULTS}/tables/omp_regions.parquet",
            caption="../report/omp_regions.rst",
            category="Tables",
        ),
    log:
        f"{RESULTS}/logs/tables/omp_regions.log",
    conda:
        ENV_FILE
    threads: MACHINE_CORES
    resources:
        bench_slot=1,
    params:
        code=code_digest("omp_regions.py"),
        config=job_config("omp_regions.py"),
    script:
        "../scripts/omp_regions.py"
