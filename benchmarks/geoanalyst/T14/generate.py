import xarray as xr
r = rng()
years = np.arange(1860, 2100); lat = np.arange(15.0, 75.1, 2.5); lon = np.arange(-170.0, -49.9, 2.5)
base = 300 - 0.5 * (lat[:, None] - 15) + 0 * lon[None, :]
trend = np.clip((years - 1960) / 140, 0, None) * 3.0
noise = ndimage.gaussian_filter(r.normal(0, 1.2, (len(years), len(lat), len(lon))), (0.8, 2, 2)) * 2
tas = base[None] + trend[:, None, None] + noise
time = pd.to_datetime([f"{y}-07-01" for y in years])
ds = xr.Dataset({"air_temperature": (("time", "latitude", "longitude"), tas.astype("float32"), {"units": "K", "standard_name": "air_temperature"})},
                coords={"time": time, "latitude": lat, "longitude": lon}, attrs={"title": "Synthetic annual mean surface air temperature, North America"})
ds.to_netcdf("data/E1_north_america.nc")
