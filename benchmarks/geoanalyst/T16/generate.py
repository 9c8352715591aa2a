import xarray as xr
r = rng()
years = np.arange(1860, 2100); lat = np.arange(15.0, 75.1, 5.0); lon = np.arange(-170.0, -49.9, 5.0)
g = 287 + 0.00012 * (years - 1860) ** 2 - 0.004 * (years - 1860) + r.normal(0, 0.25, len(years))
tas = g[:, None, None] - 0.5 * (lat[None, :, None] - 45) + r.normal(0, 0.5, (len(years), len(lat), len(lon)))
ds = xr.Dataset({"air_temperature": (("time", "latitude", "longitude"), tas.astype("float32"), {"units": "K"})},
                coords={"time": pd.to_datetime([f"{y}-07-01" for y in years]), "latitude": lat, "longitude": lon},
                attrs={"title": "Synthetic A1B-scenario annual mean air temperature, North America"})
ds.to_netcdf("data/A1B_north_america.nc")
