"""Small hand-written word banks and sentence grammars for the synthetic generators.

No third-party data: every word list here was written for this project. The grammars
multiply a few short lists, so two runs rarely share a sentence by accident.
"""

from __future__ import annotations

from ._common import Run

__all__ = [
    "COMPANIES",
    "FIRST_NAMES",
    "LANGUAGES",
    "LAST_NAMES",
    "STUCK_SENTENCES",
    "WORDS",
    "date",
    "file_path",
    "hex_id",
    "iso_time",
    "prose",
    "prose_sentence",
    "stuck_sentence",
    "unique",
]

WORDS = (
    "auth billing cache invoice report user session payment search export import metrics queue "
    "worker scheduler config router parser logger storage notify profile order cart inventory "
    "ledger catalog pricing refund shipping upload thumbnail webhook audit tenant quota backup "
    "gateway token mailer sync index ranking feed alert digest archive"
).split()

FIRST_NAMES = (
    "Ada Bruno Chen Dana Emil Farah Goran Hana Ivan Jonas Kemal Lena Mateo Nadia Omar Priya "
    "Quinn Rosa Sven Tomas Uma Viktor Wen Yara Zoe"
).split()

LAST_NAMES = (
    "Almeida Berger Castillo Dubois Eriksen Fischer Garcia Haddad Ivanova Jensen Kowalski "
    "Lindqvist Moreau Novak Okafor Petrov Rossi Schmidt Tanaka Ueda Virtanen Weber Yilmaz Zhou"
).split()

COMPANIES = (
    "ACME Corp|Globex|Initech|Umbrella Health|Stark Logistics|Wayne Textiles|Hooli|Vandelay "
    "Industries|Soylent Foods|Tyrell Systems|Cyberdyne Labs|Wonka Confectionery|Oscorp|Aperture "
    "Science|Massive Dynamic|Nakatomi Trading|Gringotts Bank|Monarch Solutions"
).split("|")

_SUBJECTS = (
    "the parser|the cache layer|the billing service|this function|the retry policy|the "
    "scheduler|the migration script|our API gateway|the export job|the login form|the search "
    "index|the webhook handler|the report generator|the config loader|the queue consumer|the "
    "payment client|the CSV importer|the rate limiter|the session store|the audit log"
).split("|")

_VERBS = (
    "reads|validates|caches|rejects|forwards|normalises|logs|batches|retries|serialises|"
    "deduplicates|compresses|signs|streams|indexes|throttles|encrypts|sorts|groups|checks"
).split("|")

_OBJECTS = (
    "incoming requests|the configuration file|expired tokens|each invoice|the user "
    "profile|every event|the uploaded files|pending jobs|the query results|the price "
    "list|the tenant settings|stale entries|the audit records|the access keys|new "
    "orders|failed deliveries|the search terms|the daily totals|the shipping labels|the "
    "error reports"
).split("|")

_TAILS = (
    "before the first retry|on every deploy|when the queue is empty|in under 50 ms|for each "
    "tenant|at startup|after the lock is released|once per hour|inside a transaction|before "
    "it writes to disk|when the feature flag is on|in the background|for the EU region|during "
    "the nightly run|right after authentication|without blocking the caller|in batches of "
    "100|only for admin users|until the timeout expires|whenever the schema changes"
).split("|")

_OPENERS = (
    "|Note that |In practice, |By default, |As a result, |In this setup, |Currently, |"
    "According to the docs, |In the current version, |For now, |Usually, |After the change, "
).split("|")

_CONNECTIVES = (
    "This means {a}.|If {a}, then {b}.|Because {a}, {b}.|Once {a}, {b}.|Even when {a}, {b}."
).split("|")

STUCK_SENTENCES = (
    "Let me check the configuration again.",
    "I will now run the tests to verify the fix.",
    "I apologize for the confusion.",
    "Let me try a different approach.",
    "The function returns the expected value.",
    "I need to verify that the file exists.",
    "Let me look at the error message more carefully.",
    "I will update the import and try again.",
    "The build should pass now.",
    "Let me re-read the requirements.",
    "I'm going to call the search tool one more time.",
    "Now I will double-check the output.",
    "This should resolve the issue.",
    "Let me make sure the path is correct.",
    "I think the problem is in the parser.",
    "Let me call lint().",
    "I need to verify.",
    "Running the migration again.",
    "The answer is 42.",
    "Please wait while I check.",
)


def unique(run: Run, make: object, k: int, avoid: set[str] | None = None) -> list[str]:
    """``k`` distinct strings from the zero-argument maker ``make`` (retries on repeats)."""
    maker = make  # typed loosely so callers can pass lambdas
    seen: set[str] = set(avoid or ())
    out: list[str] = []
    attempts = 0
    while len(out) < k:
        attempts += 1
        value = maker()  # type: ignore[operator]
        if value in seen and attempts < 50 * (k + 1):
            continue
        if value in seen:
            value = f"{value} ({len(out) + 1})"
        seen.add(value)
        out.append(value)
    return out


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def prose_clause(run: Run) -> str:
    """A lower-case clause such as 'the parser validates each invoice at startup'."""
    return (
        f"{run.choice(_SUBJECTS)} {run.choice(_VERBS)} {run.choice(_OBJECTS)} {run.choice(_TAILS)}"
    )


def prose_sentence(run: Run) -> str:
    """One plain technical sentence ending in a full stop."""
    if run.chance(0.25):
        template = run.choice(_CONNECTIVES)
        return _cap(template.format(a=prose_clause(run), b=prose_clause(run)))
    opener = run.choice(_OPENERS)
    clause = prose_clause(run)
    return _cap(f"{opener}{clause}.")


def prose(run: Run, n: int, avoid: set[str] | None = None) -> list[str]:
    """``n`` distinct prose sentences, none of them in ``avoid``."""
    return unique(run, lambda: prose_sentence(run), n, avoid)


def stuck_sentence(run: Run) -> str:
    """A sentence of the kind a model repeats when it gets stuck."""
    if run.chance(0.6):
        return run.choice(STUCK_SENTENCES)
    return prose_sentence(run)


def hex_id(run: Run, n: int = 8) -> str:
    """A random lower-case hexadecimal identifier of ``n`` digits."""
    return "".join(run.choice("0123456789abcdef") for _ in range(n))


def date(run: Run, year: int = 2024) -> str:
    """An ISO date in ``year`` (days 1..28 so every month is valid)."""
    return f"{year}-{run.randint(1, 12):02d}-{run.randint(1, 28):02d}"


def iso_time(base: int) -> str:
    """An ISO-8601 UTC timestamp for ``base`` seconds after 2024-01-01T00:00:00Z."""
    days, rest = divmod(base, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    month_lengths = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
    month = 0
    days %= 366
    while days >= month_lengths[month]:
        days -= month_lengths[month]
        month += 1
    return f"2024-{month + 1:02d}-{days + 1:02d}T{hours:02d}:{minutes:02d}:{seconds:02d}Z"


def file_path(run: Run) -> str:
    """A plausible source-file path."""
    root = run.choice(("src", "lib", "app", "pkg", "services", "internal"))
    ext = run.choice(("py", "ts", "go", "js", "rs", "py", "ts"))
    return f"{root}/{run.choice(WORDS)}/{run.choice(WORDS)}_{run.choice(WORDS)}.{ext}"


# --- non-English sentence grammars ------------------------------------------------------
# Each language: (subjects, predicates, joiner between subject and predicate, joiner
# between sentences, tags). CJK languages other than Korean write no spaces.
LANGUAGES: dict[str, dict[str, object]] = {
    "es": {
        "subjects": [
            "El servidor",
            "La base de datos",
            "El script de migración",
            "El equipo de soporte",
            "La factura",
            "El informe mensual",
            "El usuario",
            "La cola de trabajos",
        ],
        "predicates": [
            "revisa la configuración otra vez.",
            "devuelve el mismo error.",
            "necesita más memoria.",
            "se actualiza cada noche.",
            "envía una notificación al cliente.",
            "guarda los cambios en el disco.",
            "tarda más de lo esperado.",
            "funciona correctamente ahora.",
            "valida todos los campos.",
        ],
        "space": " ",
        "sep": " ",
        "tags": ["non-english"],
    },
    "fr": {
        "subjects": [
            "Le serveur",
            "La base de données",
            "Le script de migration",
            "L'équipe",
            "La facture",
            "Le rapport",
            "L'utilisateur",
            "La file d'attente",
        ],
        "predicates": [
            "vérifie encore la configuration.",
            "renvoie la même erreur.",
            "a besoin de plus de mémoire.",
            "est mis à jour chaque nuit.",
            "envoie une notification au client.",
            "enregistre les modifications.",
            "prend plus de temps que prévu.",
            "fonctionne correctement maintenant.",
            "valide tous les champs.",
        ],
        "space": " ",
        "sep": " ",
        "tags": ["non-english"],
    },
    "de": {
        "subjects": [
            "Der Server",
            "Die Datenbank",
            "Das Migrationsskript",
            "Das Team",
            "Die Rechnung",
            "Der Monatsbericht",
            "Der Benutzer",
            "Die Warteschlange",
        ],
        "predicates": [
            "prüft die Konfiguration noch einmal.",
            "liefert denselben Fehler.",
            "braucht mehr Speicher.",
            "wird jede Nacht aktualisiert.",
            "schickt dem Kunden eine Nachricht.",
            "speichert die Änderungen.",
            "dauert länger als erwartet.",
            "funktioniert jetzt richtig.",
            "prüft alle Felder.",
        ],
        "space": " ",
        "sep": " ",
        "tags": ["non-english"],
    },
    "pt": {
        "subjects": [
            "O servidor",
            "O banco de dados",
            "O script de migração",
            "A equipe",
            "A fatura",
            "O relatório",
            "O usuário",
            "A fila de tarefas",
        ],
        "predicates": [
            "verifica a configuração de novo.",
            "retorna o mesmo erro.",
            "precisa de mais memória.",
            "é atualizado toda noite.",
            "envia uma notificação ao cliente.",
            "salva as alterações no disco.",
            "demora mais do que o esperado.",
            "funciona corretamente agora.",
        ],
        "space": " ",
        "sep": " ",
        "tags": ["non-english"],
    },
    "ru": {
        "subjects": [
            "Сервер",
            "База данных",
            "Скрипт миграции",
            "Команда поддержки",
            "Счёт",
            "Ежемесячный отчёт",
            "Пользователь",
            "Очередь задач",
        ],
        "predicates": [
            "снова проверяет конфигурацию.",
            "возвращает ту же ошибку.",
            "требует больше памяти.",
            "обновляется каждую ночь.",
            "отправляет уведомление клиенту.",
            "сохраняет изменения на диск.",
            "работает дольше, чем ожидалось.",
            "теперь работает правильно.",
            "проверяет все поля.",
        ],
        "space": " ",
        "sep": " ",
        "tags": ["non-english"],
    },
    "zh": {
        "subjects": [
            "服务器",
            "数据库",
            "迁移脚本",
            "支持团队",
            "这张发票",
            "月度报告",
            "用户",
            "任务队列",
        ],
        "predicates": [
            "再次检查配置文件。",
            "返回同样的错误。",
            "需要更多内存。",
            "每天晚上更新一次。",
            "给客户发送通知。",
            "把修改保存到磁盘。",
            "比预期花了更长时间。",
            "现在运行正常。",
            "验证所有字段。",
        ],
        "space": "",
        "sep": "",
        "tags": ["non-english", "cjk"],
    },
    "ja": {
        "subjects": [
            "サーバーは",
            "データベースは",
            "移行スクリプトは",
            "サポートチームは",
            "請求書は",
            "月次レポートは",
            "ユーザーは",
            "ジョブキューは",
        ],
        "predicates": [
            "もう一度設定を確認します。",
            "同じエラーを返します。",
            "もっとメモリが必要です。",
            "毎晩更新されます。",
            "顧客に通知を送ります。",
            "変更をディスクに保存します。",
            "予想より時間がかかります。",
            "今は正しく動いています。",
            "すべての項目を検証します。",
        ],
        "space": "",
        "sep": "",
        "tags": ["non-english", "cjk"],
    },
    "ko": {
        "subjects": [
            "서버가",
            "데이터베이스가",
            "마이그레이션 스크립트가",
            "지원팀이",
            "청구서가",
            "월간 보고서가",
            "사용자가",
            "작업 대기열이",
        ],
        "predicates": [
            "설정을 다시 확인합니다.",
            "같은 오류를 반환합니다.",
            "더 많은 메모리가 필요합니다.",
            "매일 밤 업데이트됩니다.",
            "고객에게 알림을 보냅니다.",
            "변경 사항을 디스크에 저장합니다.",
            "예상보다 오래 걸립니다.",
            "이제 정상적으로 작동합니다.",
        ],
        "space": " ",
        "sep": " ",
        "tags": ["non-english", "cjk"],
    },
}


def language_sentence(run: Run, lang: str) -> str:
    """One sentence in ``lang`` from its subject and predicate lists."""
    spec = LANGUAGES[lang]
    subjects: list[str] = spec["subjects"]  # type: ignore[assignment]
    predicates: list[str] = spec["predicates"]  # type: ignore[assignment]
    return f"{run.choice(subjects)}{spec['space']}{run.choice(predicates)}"
