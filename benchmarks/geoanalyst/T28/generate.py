# Twenty subregions with socio-economic attributes, and trip records between
# them (several records per pair, as raw OD logs come) whose volumes follow
# a gravity model: flows grow with population, GDP, employment and
# education and decay weakly with distance between the subregions' (hidden)
# centres.
r = rng()
n = 20
names = [f"R{i:02d}" for i in range(1, n + 1)]
xy = r.uniform(0, 100, (n, 2))
pop = r.lognormal(11.0, 0.6, n).round()
gdp = (pop * r.uniform(25, 60, n) / 1000).round(2)
socio = pd.DataFrame({
    "Subregion": names,
    "Population": pop.astype(int),
    "GDP": gdp,
    "EmploymentRate": r.uniform(0.82, 0.97, n).round(3),
    "AverageIncome": (gdp / pop * 1e6 * r.uniform(0.8, 1.2, n)).round(0),
    "EducationIndex": r.uniform(0.55, 0.95, n).round(3),
    "HealthcareAccess": r.uniform(0.4, 1.0, n).round(3),
})
socio.to_csv("data/socioeconomic_data.csv", index=False)
rows = []
for i in range(n):
    for j in range(n):
        if i == j or r.random() < 0.15:
            continue
        d = np.hypot(*(xy[i] - xy[j])) + 20
        volume = 0.02 * pop[i] ** 0.7 * pop[j] ** 0.5 * (gdp[j] / gdp.mean()) ** 0.8 * (0.5 + sum(socio.loc[j, ["EmploymentRate", "EducationIndex"]])) / d ** 0.3
        for _ in range(r.integers(1, 4)):
            rows.append((names[i], names[j], max(1, int(volume * r.uniform(0.2, 0.5)))))
pd.DataFrame(rows, columns=["Origin", "Destination", "FlowVolume"]).to_csv("data/od_data.csv", index=False)
