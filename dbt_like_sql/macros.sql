-- Statistics shared by the models; the runner creates these before any model, as temporary
-- macros of its connection (a DuckLake catalog holds tables and views, not macros).

-- The interval of the share p of n from its centre and half-width (before scaling), clamped to [0, 1]
-- and holding p: at p = 1 (or 0) the bound is 1 (0) but rounds to a hair below (above) it.
CREATE OR REPLACE TEMP MACRO wilson_of(p, n, centre, half) AS
    {'rate': p,
     'low': least(p, greatest(0.0, (centre - half) / (1 + 3.841458820694124 / n))),
     'high': greatest(p, least(1.0, (centre + half) / (1 + 3.841458820694124 / n)))};

-- The share x/n with its 95% Wilson score interval, as a struct (rate, low, high); null when
-- n = 0. A model computes it once and unpacks it into its columns: `wilson(answers, all_answers)
-- AS reason_share` in a CTE, then `reason_share.rate AS share, reason_share.low AS share_low, ...`.
CREATE OR REPLACE TEMP MACRO wilson(x, n) AS
    CASE WHEN n > 0 THEN wilson_of(x / n, n,
        x / n + 3.841458820694124 / (2 * n),
        1.959963984540054 * sqrt((x / n) * (1 - x / n) / n + 3.841458820694124 / (4 * n * n))) END;

-- Its bounds alone (the report's interval bars).
CREATE OR REPLACE TEMP MACRO wilson_low(x, n) AS wilson(x, n).low;
CREATE OR REPLACE TEMP MACRO wilson_high(x, n) AS wilson(x, n).high;

-- A day's share x1/n1 against its baseline's x0/n0, each with its interval: the columns rate,
-- rate_low, rate_high, baseline_rate, baseline_low and baseline_high, as a model selects them
-- with `unnest(against_baseline(x1, n1, x0, n0))`.
CREATE OR REPLACE TEMP MACRO shares_against(day_share, week_share) AS
    {'rate': day_share.rate, 'rate_low': day_share.low, 'rate_high': day_share.high,
     'baseline_rate': week_share.rate, 'baseline_low': week_share.low, 'baseline_high': week_share.high};

CREATE OR REPLACE TEMP MACRO against_baseline(x1, n1, x0, n0) AS shares_against(wilson(x1, n1), wilson(x0, n0));

-- z statistic of the two-proportion test (pooled variance) of x1/n1 against x0/n0.
CREATE OR REPLACE TEMP MACRO two_proportion_z(x1, n1, x0, n0) AS
    CASE
        WHEN n1 = 0 OR n0 = 0 THEN NULL
        WHEN (x1 + x0) = 0 OR (x1 + x0) = (n1 + n0) THEN 0.0
        ELSE (x1 / n1 - x0 / n0)
             / sqrt(((x1 + x0) / (n1 + n0)) * (1 - (x1 + x0) / (n1 + n0)) * (1 / n1 + 1 / n0))
    END;

-- Two-sided p-value of a standard normal z: erfc(|z|/sqrt 2), Abramowitz-Stegun 7.1.26 (error < 1.5e-7).
CREATE OR REPLACE TEMP MACRO normal_two_sided_p(z) AS
    (((((1.061405429 * (1 / (1 + 0.3275911 * abs(z) / sqrt(2))) - 1.453152027)
        * (1 / (1 + 0.3275911 * abs(z) / sqrt(2))) + 1.421413741)
        * (1 / (1 + 0.3275911 * abs(z) / sqrt(2))) - 0.284496736)
        * (1 / (1 + 0.3275911 * abs(z) / sqrt(2))) + 0.254829592)
        * (1 / (1 + 0.3275911 * abs(z) / sqrt(2)))) * exp(-(z * z) / 2);

-- The change tests' decisions, declared once for the alerts (fct_visibility_alerts), every view
-- that marks a change (the workspace's overview) and every page or report that states the rule
-- (measure/change_rule.py reads these values): a day is tested against the baseline_days() days
-- before it; a change is kept when p < change_kept_p() and clear (an alert, notified) when also
-- p < change_clear_p() and its Benjamini-Hochberg q <= change_clear_q() over the tests made beside it.
CREATE OR REPLACE TEMP MACRO baseline_days() AS 7;
CREATE OR REPLACE TEMP MACRO change_kept_p() AS 0.05;
CREATE OR REPLACE TEMP MACRO change_clear_p() AS 0.01;
CREATE OR REPLACE TEMP MACRO change_clear_q() AS 0.10;
CREATE OR REPLACE TEMP MACRO change_kept(p) AS p < change_kept_p();
CREATE OR REPLACE TEMP MACRO change_is_clear(p, q) AS p < change_clear_p() AND q <= change_clear_q();
