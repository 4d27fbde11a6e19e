-- Statistics shared by the models; the runner creates these before any model, as temporary
-- macros of its connection (a DuckLake catalog holds tables and views, not macros).

-- 95% Wilson score interval of x successes in n trials (null when n = 0).
CREATE OR REPLACE TEMP MACRO wilson_low(x, n) AS
    CASE WHEN n > 0 THEN greatest(0.0,
        (x / n + 3.841458820694124 / (2 * n)
         - 1.959963984540054 * sqrt((x / n) * (1 - x / n) / n + 3.841458820694124 / (4 * n * n)))
        / (1 + 3.841458820694124 / n)) END;

CREATE OR REPLACE TEMP MACRO wilson_high(x, n) AS
    CASE WHEN n > 0 THEN least(1.0,
        (x / n + 3.841458820694124 / (2 * n)
         + 1.959963984540054 * sqrt((x / n) * (1 - x / n) / n + 3.841458820694124 / (4 * n * n)))
        / (1 + 3.841458820694124 / n)) END;

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
