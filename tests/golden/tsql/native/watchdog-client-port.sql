-- native: watchdog: client port
SELECT client_tcp_port, local_tcp_port FROM sys.dm_exec_connections WHERE session_id = @@SPID;
