import matplotlib.pyplot as plt
import xarray as xr
ds = xr.open_dataset("data/E1_north_america.nc")
warm = (ds.air_temperature > 280).astype(int)
spells = (warm.rolling(time=5).sum() == 5).sum(dim="time").rename("warm_spell_count")
spells.attrs["long_name"] = "number of 5-year windows with all years above 280 K"
spells.to_netcdf("pred_results/warm_spell_counts.nc")
print(int(spells.min()), int(spells.max()))
# %% map
fig, ax = plt.subplots(figsize=(10, 6))
cs = ax.contourf(spells.longitude, spells.latitude, spells, levels=12, cmap="YlOrRd")
fig.colorbar(cs, ax=ax, label="five-year spells above 280 K")
ax.set_xlabel("longitude"); ax.set_ylabel("latitude"); ax.set_title("Persistent warm periods, 1860–2099")
fig.savefig("pred_results/temperature_statistic_vis.png", dpi=110, bbox_inches="tight")
