# %% what data/ holds
import os
import xarray as xr
print(sorted(os.listdir("data")))
ds = xr.open_dataset("data/A1B_north_america.nc")
print(ds)
# %% which years does the time axis cover?
years = ds["time"].dt.year
print("first year:", int(years.min()), "| last year:", int(years.max()), "|", ds.sizes["time"], "steps")
print("steps in 1840-1849:", ds.sel(time=slice("1840", "1849")).sizes["time"])
print("steps in 2090-2099:", ds.sel(time=slice("2090", "2099")).sizes["time"])
ds.close()
