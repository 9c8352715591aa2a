# GPS fixes of three collared deer over ten days (lon/lat, every 72 minutes or so),
# each moving around its own home range.
r = rng()
rows = []
homes = {"D1": (-105.55, 40.35), "D2": (-105.535, 40.36), "D3": (-105.60, 40.30)}
spread = {"D1": 0.012, "D2": 0.02, "D3": 0.008}
for animal, (lon0, lat0) in homes.items():
    t = pd.Timestamp("2024-06-01 00:00") + pd.to_timedelta(np.arange(200) * 72 + r.uniform(0, 5, 200), unit="min")
    x = lon0 + np.cumsum(r.normal(0, spread[animal] / 8, 200)) * 0.2 + r.normal(0, spread[animal], 200) * 0.25
    y = lat0 + np.cumsum(r.normal(0, spread[animal] / 8, 200)) * 0.2 + r.normal(0, spread[animal], 200) * 0.25
    for ti, xi, yi in zip(t, x, y):
        rows.append((animal, ti.strftime("%Y-%m-%d %H:%M:%S"), round(xi, 6), round(yi, 6)))
pd.DataFrame(rows, columns=["animal_id", "timestamp", "lon", "lat"]).sample(frac=1, random_state=int(SEED)).to_csv("data/gps_fixes.csv", index=False)
