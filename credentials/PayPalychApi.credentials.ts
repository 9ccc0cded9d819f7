import type {
	IAuthenticateGeneric,
	Icon,
	ICredentialTestRequest,
	ICredentialType,
	INodeProperties,
} from 'n8n-workflow';

export class PayPalychApi implements ICredentialType {
	name = 'payPalychApi';

	displayName = 'PayPalych API';

	icon: Icon = { light: 'file:../icons/paypalych.svg', dark: 'file:../icons/paypalych.dark.svg' };

	documentationUrl =
		'https://github.com/n8n-nodes-paypalych/n8n-nodes-paypalych/blob/main/docs/merchant/node.md#credentials';

	properties: INodeProperties[] = [
		{
			displayName: 'API Token',
			name: 'apiToken',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			required: true,
			placeholder: '72|oBCB7Z3SmUm1gvkpEdRcSR2q1ERHpG4vD3DNBmuT',
			description: 'The API token from the API integration page of your PayPalych account',
		},
		{
			displayName: 'Base URL',
			name: 'baseUrl',
			type: 'string',
			default: 'https://pal24.pro',
			required: true,
			placeholder: 'https://pal24.pro',
			description:
				'The address of your PayPalych site, such as https://pal24.pro, or of a local sandbox',
		},
		{
			displayName: 'Shop ID',
			name: 'shopId',
			type: 'string',
			default: '',
			placeholder: 'e.g. 9rQBbwZV1g',
			description:
				"Your shop's ID from the shop settings, used by Bill › Create when the node has none",
		},
	];

	authenticate: IAuthenticateGeneric = {
		type: 'generic',
		properties: {
			headers: {
				Authorization: '=Bearer {{$credentials.apiToken}}',
			},
		},
	};

	test: ICredentialTestRequest = {
		request: {
			baseURL: '={{$credentials.baseUrl.replace(/\\/+$/, "").replace(/\\/api\\/v1$/i, "")}}',
			url: '/api/v1/merchant/balance',
			method: 'GET',
			headers: { Accept: 'application/json' },
		},
		rules: [
			{
				type: 'responseCode',
				properties: {
					value: 401,
					message:
						'The API token was rejected. Refresh it on the API integration page and paste the new one',
				},
			},
			{
				type: 'responseCode',
				properties: {
					value: 404,
					message:
						"The Base URL does not lead to a PayPalych API. Use your PayPalych site's address, such as https://pal24.pro, without /api/v1",
				},
			},
		],
	};
}
