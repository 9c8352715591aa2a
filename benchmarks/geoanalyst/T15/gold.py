import matplotlib.pyplot as plt
import xarray as xr
ds = xr.open_dataset("data/space_weather.nc")
tec = ds.TEC.where(ds.TEC >= 0)
print(float(tec.min()), float(tec.max()), int(tec.isnull().sum()), "masked")
fig, ax = plt.subplots(figsize=(12, 6))
cs = ax.contourf(tec.longitude, tec.latitude, tec, levels=20, cmap="plasma")
fig.colorbar(cs, ax=ax, label="TEC (TECU)")
ax.axhline(0, color="white", linewidth=0.8); ax.grid(color="white", alpha=0.4)
ax.set_xlabel("longitude"); ax.set_ylabel("latitude"); ax.set_title("Total Electron Content (graticule; no coastline data offline)")
fig.savefig("pred_results/TEC_vis.png", dpi=110, bbox_inches="tight")
