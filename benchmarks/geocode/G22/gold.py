ds = xr.open_dataset("data/precip_2023.nc")
pr = ds["pr"]
pr_shape = list(pr.shape)
# %%
i = np.unravel_index(int(pr.argmax()), pr.shape)
wettest_cell = [float(pr["lat"][i[1]]), float(pr["lon"][i[2]])]
# %%
daily = pr.mean(["lat", "lon"])
run = best = 0
for v in daily.values:
    run = run + 1 if v < 1 else 0
    best = max(best, run)
dry_spell = best
# %%
r95_mean = round(float(pr.quantile(0.95, dim="time").mean()), 3)
# %%
rx5day = round(float(daily.rolling(time=5).sum().max()), 3)
# %%
monthly_max = [round(float(v), 3) for v in daily.resample(time="MS").max().values]
# %%
annual = pr.sum("time")
wetter_cells = int((annual > annual.mean()).sum())
# %%
monthly_mean = pr.resample(time="MS").sum().mean(["lat", "lon"])
cycle_amplitude = round(float(monthly_mean.max() - monthly_mean.min()), 3)
# %%
wet_days_domain = int((daily >= 1).sum())
# %%
lat_median = float(np.median(pr["lat"].values))
north_minus_south = round(float(annual.where(annual["lat"] > lat_median).mean() - annual.where(annual["lat"] <= lat_median).mean()), 3)
# %%
run = best = 0
for v in daily.values:
    run = run + 1 if v >= 1 else 0
    best = max(best, run)
longest_wet_run = best
