"""Human labels and judges you can trust: label schemas, labels, review queues, judge–human
agreement kept per scorer version, alignment of a judge to labels, and canary drift checks.

``store`` arguments are an open ``tracescore.store.Store`` (``Store(path).open()``); the server
calls the same functions behind ``/api/labels``, ``/api/queues`` and ``/api/agreement``.
Importing this room loads numpy (the statistics); DuckDB loads with the store.
"""

from ._agreement import agreement_row, annotator_row, consensus, verdicts
from ._align import AlignReport, CandidateResult, align, split_keys, version_row
from ._alignment import Alignment, Example, load_alignment
from ._canary import (
    CanaryOutcome,
    ModelWatch,
    canary_due,
    drift_event,
    drift_text,
    event_writer,
    outcome_writer,
    run_canary,
)
from ._config import CanaryEntry, LabelsSettings, duration_s, parse_labels_config
from ._errors import AlignError, InvalidLabel, LabelsError, LabelsNotFound, QueueExists
from ._labels import (
    add,
    create_schema,
    export_row,
    get_schema,
    import_labels,
    list_labels,
    list_schemas,
    parse_jsonl,
)
from ._models import Agreement, Label, LabelSchema, QueueSpec, agreement_text, target_key
from ._queues import (
    create_queue,
    enqueue_review_items,
    get_queue,
    item_detail,
    list_queues,
    next_item,
    skip_item,
)
from ._reads import (
    BEST_BY_SCORER_SQL,
    agreement,
    agreement_for,
    agreement_json,
    agreement_warnings,
    annotator_agreement,
    describe,
    gating_warnings,
    with_agreement,
)
from ._stats import (
    Estimate,
    cohen_kappa,
    krippendorff_alpha,
    mean_absolute_error,
    positive_rates,
    spearman,
)
from ._upkeep import AgreementKeeper, RefreshReport, refresh_agreement

__all__ = [
    "BEST_BY_SCORER_SQL",
    "Agreement",
    "AgreementKeeper",
    "AlignError",
    "AlignReport",
    "Alignment",
    "CanaryEntry",
    "CanaryOutcome",
    "CandidateResult",
    "Estimate",
    "Example",
    "ModelWatch",
    "InvalidLabel",
    "Label",
    "LabelSchema",
    "LabelsError",
    "LabelsNotFound",
    "LabelsSettings",
    "QueueExists",
    "QueueSpec",
    "RefreshReport",
    "add",
    "agreement",
    "agreement_row",
    "align",
    "canary_due",
    "drift_event",
    "drift_text",
    "event_writer",
    "load_alignment",
    "outcome_writer",
    "run_canary",
    "split_keys",
    "verdicts",
    "version_row",
    "agreement_for",
    "agreement_json",
    "agreement_text",
    "agreement_warnings",
    "annotator_agreement",
    "annotator_row",
    "cohen_kappa",
    "consensus",
    "create_queue",
    "enqueue_review_items",
    "create_schema",
    "describe",
    "duration_s",
    "export_row",
    "gating_warnings",
    "get_queue",
    "get_schema",
    "import_labels",
    "item_detail",
    "krippendorff_alpha",
    "list_labels",
    "list_queues",
    "list_schemas",
    "mean_absolute_error",
    "next_item",
    "parse_jsonl",
    "parse_labels_config",
    "positive_rates",
    "refresh_agreement",
    "skip_item",
    "spearman",
    "target_key",
    "with_agreement",
]
