rule bench_rep:
    """One cold rep in a fresh process. Reps chain in the rotated schedule of their study, and each
    claims every core plus the global bench_slot, so no other job runs beside a timing job.
    """
    input:
        build=get_arm_build_json,
        envs=get_arm_environments,
        ready=get_environments_ready,
        previous=get_previous_rep,
        earlier=get_earlier_reps,
    output:
        f"{RESULTS}/raw/{{study}}/{{engine}}/{{label}}/rep{{rep}}.parquet",
    log:
        f"{RESULTS}/logs/{{study}}/{{engine}}/{{label}}/rep{{rep}}.log",
    conda:
        ENV_FILE
    threads: MACHINE_CORES
    resources:
        bench_slot=1,
    params:
        code=code_digest("bench_rep.py"),
        slot=get_rep_slot,
        config=job_config("bench_rep.py"),
    script:
        "../scripts/bench_rep.py"


rule warm_session:
    """Warm throughput: every session arm's engine resident in its own process, sampled in
    randomized interleaved rounds. Claims every core and the bench_slot, like a cold rep. With
    bench.warm_sessions > 1, each session is its own job: fresh engines, a fresh order.
    """
    input:
        builds=get_session_build_jsons,
        envs=get_session_environments,
        ready=get_environments_ready,
    output:
        f"{RESULTS}/raw/warm/session{{session}}.parquet",
    log:
        f"{RESULTS}/logs/warm/session{{session}}.log",
    conda:
        ENV_FILE
    threads: MACHINE_CORES
    resources:
        bench_slot=1,
    params:
        code=code_digest("warm_session.py"),
        config=job_config("warm_session.py"),
    script:
        "../scripts/warm_session.py"


rule warm_table:
    input:
        get_warm_sessions,
    output:
        report(
            f"{RESULTS}/tables/warm.parquet",
            caption="../report/warm_table.rst",
            category="Tables",
        ),
    log:
        f"{RESULTS}/logs/tables/warm.log",
    conda:
        ENV_FILE
    params:
        table="warm",
        retractions=RETRACTIONS,
        code=code_digest("join_table.py"),
        config=job_config("join_table.py"),
    script:
        "../scripts/join_table.py"


rule warm_noise:
    """How steady the warm session was, per duet and way of timing: paired SD, cost, MDE."""
    input:
        f"{RESULTS}/tables/warm.parquet",
    output:
        report(
            f"{RESULTS}/tables/warm_noise.parquet",
            caption="../report/warm_noise.rst",
            category="Tables",
        ),
    log:
        f"{RESULTS}/logs/tables/warm_noise.log",
    conda:
        ENV_FILE
    params:
        baseline=config["gates"]["baseline"],
        code=code_digest("warm_noise.py"),
        config=job_config("warm_noise.py"),
    script:
        "../scripts/warm_noise.py"


rule study_table:
    input:
        get_study_reps,
    output:
        report(
            f"{RESULTS}/tables/{{study}}.parquet",
            caption="../report/bench_table.rst",
            category="Tables",
            labels={"table": "{study}"},
        ),
    log:
        f"{RESULTS}/logs/tables/{{study}}.log",
    conda:
        ENV_FILE
    params:
        table="bench",
        retractions=RETRACTIONS,
        code=code_digest("join_table.py"),
        config=job_config("join_table.py"),
    script:
        "../scripts/join_table.py"


rule compare_and_gates:
    input:
        cold=f"{RESULTS}/tables/bench.parquet",
        warm=f"{RESULTS}/tables/warm.parquet",
    output:
        compare=report(
            f"{RESULTS}/tables/compare.parquet",
            caption="../report/compare_table.rst",
            category="Tables",
        ),
        gates=report(
            f"{RESULTS}/tables/gates.parquet",
            caption="../report/gates_table.rst",
            category="Tables",
        ),
    log:
        f"{RESULTS}/logs/tables/compare_and_gates.log",
    conda:
        ENV_FILE
    params:
        gates=config["gates"],
        code=code_digest("compare_and_gates.py"),
        config=job_config("compare_and_gates.py"),
    script:
        "../scripts/compare_and_gates.py"


rule validity:
    input:
        f"{RESULTS}/tables/warm.parquet",
    output:
        report(
            f"{RESULTS}/tables/validity.parquet",
            caption="../report/validity_table.rst",
            category="Tables",
        ),
    log:
        f"{RESULTS}/logs/tables/validity.log",
    conda:
        ENV_FILE
    params:
        gates=config["gates"],
        calibration=config.get("calibration", {}),
        effects=get_injected_effects,
        code=code_digest("validity.py"),
        config=job_config("validity.py"),
    script:
        "../scripts/validity.py"


rule compile_cost:
    """Compile time (inside the compiled arm's ready_s) against the request time it saves."""
    input:
        cold=f"{RESULTS}/tables/bench.parquet",
        warm=f"{RESULTS}/tables/warm.parquet",
    output:
        report(
            f"{RESULTS}/tables/compile_cost.parquet",
            caption="../report/compile_cost_table.rst",
            category="Tables",
        ),
    log:
        f"{RESULTS}/logs/tables/compile_cost.log",
    conda:
        ENV_FILE
    params:
        compiled=config.get("compiled", {}),
        code=code_digest("compile_cost.py"),
        config=job_config("compile_cost.py"),
    script:
        "../scripts/compile_cost.py"


rule crosscheck:
    """edgebench's samples against vLLM's own latency benchmark on one resident engine, in
    alternating rounds. A timing job: every core and the bench_slot.
    """
    input:
        build=get_crosscheck_build_json,
    output:
        table=report(
            f"{RESULTS}/tables/crosscheck.parquet",
            caption="../report/crosscheck_table.rst",
            category="Tables",
        ),
        rounds=f"{RESULTS}/tables/crosscheck_rounds.parquet",
    log:
        f"{RESULTS}/logs/tables/crosscheck.log",
    conda:
        ENV_FILE
    threads: MACHINE_CORES
    resources:
        bench_slot=1,
    params:
        crosscheck=config.get("crosscheck", {}),
        code=code_digest("crosscheck.py"),
        config=job_config("crosscheck.py"),
    script:
        "../scripts/crosscheck.py"


rule pilot:
    """Where the throughput variance lives (per process, per round, residual) and which pairing
    removes most of it (sequential interleaving vs duet). Not part of `all`:
    snakemake --cores 2 results/tables/pilot.parquet
    """
    input:
        build=get_pilot_build_json,
    output:
        table=report(
            f"{RESULTS}/tables/pilot.parquet",
            caption="../report/pilot_table.rst",
            category="Tables",
        ),
        samples=f"{RESULTS}/raw/pilot/samples.parquet",
    log:
        f"{RESULTS}/logs/tables/pilot.log",
    conda:
        ENV_FILE
    threads: MACHINE_CORES
    resources:
        bench_slot=1,
    params:
        pilot=config["pilot"],
        tolerance=config["gates"]["tolerance"],
        code=code_digest("pilot.py"),
        config=job_config("pilot.py"),
    script:
        "../scripts/pilot.py"
