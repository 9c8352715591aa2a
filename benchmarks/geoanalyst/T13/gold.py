import matplotlib.pyplot as plt
import xarray as xr
ds = xr.open_dataset("data/atlantic_profiles.nc")
print(ds)
sub = ds.sel(latitude=slice(-30, -15), longitude=slice(-35, -15), depth=slice(0, 1000))
prof = sub.mean(dim=["latitude", "longitude"])
table = pd.DataFrame({"depth": prof.depth.values, "temperature": prof.sea_water_potential_temperature.values,
                      "salinity": prof.sea_water_practical_salinity.values})
table.to_csv("pred_results/ocean_profile.csv", index=False)
# %% figure
fig, ax = plt.subplots(figsize=(6, 8))
ax.plot(table.temperature, table.depth, "r-o", label="temperature")
ax.set_xlabel("potential temperature (°C)", color="red"); ax.set_ylabel("depth (m)"); ax.invert_yaxis()
ax2 = ax.twiny()
ax2.plot(table.salinity, table.depth, "b-s", label="salinity"); ax2.set_xlabel("practical salinity", color="blue")
ax.set_title("South Atlantic T–S profile (30–15°S, 35–15°W)", pad=40)
fig.savefig("pred_results/ocean_profiles_vis.png", dpi=110, bbox_inches="tight")
