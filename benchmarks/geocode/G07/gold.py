ds = xr.open_dataset("data/precip_2023.nc")
pr = ds["pr"]
# %%
annual = pr.sum("time")
# %%
monthly = pr.resample(time="MS").sum()
monthly_mean = monthly.mean(["lat", "lon"])
# %%
wettest_month = int(monthly_mean["time"].dt.month[int(monthly_mean.argmax())])
# %%
wet_days = (pr >= 1).sum("time")
west_wet_days = float(wet_days.where(wet_days["lon"] < -121, drop=True).mean())
# %%
djf = pr.where(pr["time"].dt.month.isin([12, 1, 2]), drop=True).sum("time")
djf_share = float((djf / annual * 100).mean())
# %%
p95 = round(float(pr.quantile(0.95)), 3)
# %%
max_anomaly = round(float((monthly_mean - monthly_mean.mean()).max()), 3)
# %%
driest_month = int(monthly_mean["time"].dt.month[int(monthly_mean.argmin())])
# %%
annual_max_cell = round(float(annual.max()), 3)
