# Reported incidents (lon/lat) in a city: five dense clusters plus scattered
# background points, with a date and a category.
r = rng()
centres = [(-87.65, 41.88), (-87.70, 41.92), (-87.62, 41.80), (-87.75, 41.86), (-87.66, 41.97)]
rows = []
for k, (lon, lat) in enumerate(centres):
    n = [40, 30, 25, 20, 15][k]
    rows.append(np.column_stack([lon + r.normal(0, 0.0025, n), lat + r.normal(0, 0.002, n)]))
rows.append(np.column_stack([r.uniform(-87.80, -87.58, 60), r.uniform(41.76, 42.00, 60)]))
xy = np.vstack(rows)
days = pd.Timestamp("2024-03-01") + pd.to_timedelta(r.integers(0, 31, len(xy)), unit="D")
pd.DataFrame({"incident_id": np.arange(1, len(xy) + 1), "lon": xy[:, 0].round(6), "lat": xy[:, 1].round(6), "date": days.strftime("%Y-%m-%d"), "category": r.choice(["theft", "vandalism", "assault"], len(xy), p=[0.6, 0.3, 0.1])}).to_csv("data/incidents.csv", index=False)
